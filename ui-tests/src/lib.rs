//! trybuild cases live in tests/ui; see tests/ui.rs.
#![forbid(unsafe_code)]
