"""The shipped learned heads (gate.npz, judge.npz) and their datasheet (DATASHEET.md)."""
