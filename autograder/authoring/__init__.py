"""The instructor's side before a term: `release`, `check`, `new`, `configure`, `publish`,
`wheel`, `site`, and what they share (setup cells, README blocks, leak searches).

Imports the layers below it, never `autograder.classroom` (docs/design.md, "Layers").
"""
