"""tirx.runtime."""
