"""tracebloc-installer: one install engine for the tracebloc client."""

__version__ = "0.1.0"
