"""Figure modules, one per paper, plus the shared style and saving convention."""
