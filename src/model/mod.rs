//! Model files: parse, apply --set overrides, validate.
