"""Detached work: the jobs a run leaves behind (the model worker, the clustering, graph.html's render, the reconcile) and the one call that updates a scope and wakes them."""
