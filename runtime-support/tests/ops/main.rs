//! The crate's integration tests, in one binary: each test binary links the whole Burn stack
//! (~130 MB, a long link on two cores), so the suites share one. `tests/malloc.rs` stays apart:
//! it checks what the first forward does to the process's allocator.

mod helpers;
mod kernels;
mod loading;
mod tree_walk;
