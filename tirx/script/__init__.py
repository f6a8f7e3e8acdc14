"""The Python frontend: ``from tirx.script import tirx as T`` (and ``ir as I``)."""
