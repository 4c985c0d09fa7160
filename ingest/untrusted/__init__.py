"""Text and documents from outside, made safe to use: control characters found and escaped
(`controls`), YAML loaded without alias bombs (`yaml_load`). Leaves: they import nothing of the
project, so every package may use them."""
