//! The example's tests, in one binary (each test binary links the whole Burn stack).

mod data_parallel;
mod fine_tune;
mod ort_parity;
