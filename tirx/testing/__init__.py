"""tirx.testing."""
