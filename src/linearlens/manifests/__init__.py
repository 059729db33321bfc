"""One manifest per document: every figure and table it has, what builds it and what it shows.

``entries`` holds the entry type; each document's module (``telescoping``, ``iterative_linearisation``,
``george_thesis``, ``karp_thesis``) lists its ``ENTRIES`` in the document's own numbering. Nothing here
imports torch: the workflow reads the manifests when it builds the DAG.
"""
