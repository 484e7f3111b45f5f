"""The HTML report: the page built from the stages' tables, metrics and images."""
