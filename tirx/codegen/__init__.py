"""tirx.codegen."""
