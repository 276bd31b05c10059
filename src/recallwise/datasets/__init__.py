"""Data sets recallwise measures itself on, read from where the user keeps them (none is shipped).

``bench`` and ``tuning`` both import their loaders from here, so neither imports the other for
data: :mod:`.locomo` (LoCoMo's conversations, questions and dev/test split).
"""
