"""tirx.interp."""
