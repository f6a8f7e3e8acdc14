"""The surface language both front ends share (issue #30): what a form means, written once.

Sits above the IR and the op declarations and below the front ends (``tirx.grammar``, the
text loader; ``tirx.script``, the Python frontend) and the printer:

* ``builder``: the IRBuilder, the only way a front end builds functions;
* ``forms``, ``layout_forms``, ``region_forms``: the FormSpecs (script name, arguments,
  the node each builds), read by both front ends and the printer;
* ``comments``: the comment table and attachment rules the loader fills and the printer reads.

Importing the package loads none of them (each is imported by its users).
"""
