//! When the CPU kernels split work across rayon's pool (flex's threads), and keeping the pool's
//! other threads ready while a model's forward runs.
//!
//! Handing work to another thread of the pool, and waking it when it sleeps, costs about 5–25 µs
//! on a virtual CPU (a futex wake-up and a steal): more than a small op takes. So an op runs
//! where it is called unless it has enough work for every job (`PARALLEL_MIN_*`); and once a
//! forward has gone parallel, the other threads poll for work until it returns instead of
//! falling asleep between ops, as ONNX Runtime's threads spin (`start_polling`). A model whose
//! ops are all small never wakes a thread.

/// Multiply-adds below which a product stays on the calling thread: 2^19 take about 10–20 µs
/// on one core. Silero's convolutions (~200k multiply-adds each) ran slower on two threads than
/// on one, and so did Silero at 2^18; at 2^20 narrow networks ran most of their convolutions
/// on one thread of two (the zoo's ResNet-18 ×0.25, SqueezeNet 1.1 and MNASNet 0.5 at two
/// threads, 2^20 → 2^19: 1.44 → 1.16, 1.34 → 1.22, 1.43 → 1.14 ms; Silero 0.090 → 0.091 ms).
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
pub(crate) const PARALLEL_MIN_FMAS: usize = 1 << 19;

/// Element visits (a load, a little arithmetic, a store) below which a memory-bound op stays on
/// the calling thread: 2^16 take about 20–60 µs.
#[cfg_attr(not(feature = "flex"), allow(dead_code))]
pub(crate) const PARALLEL_MIN_ELEMENTS: usize = 1 << 16;

/// Items per parallel job (rayon's `with_min_len`) for `items` items of `work_per_item` each,
/// so that every job has at least `min_work`: an op with less work in all is one job, run where
/// it is called. When there will be several jobs, the pool's threads are set polling first.
#[cfg(feature = "flex")]
pub(crate) fn job_len(items: usize, work_per_item: usize, min_work: usize) -> usize {
    let len = min_work.div_ceil(work_per_item.max(1));
    if items > len {
        start_polling();
    }
    len
}

/// Threads a product of `fmas` multiply-adds is split across: the pool's when it has at least
/// `PARALLEL_MIN_FMAS`, else only the calling one.
#[cfg(feature = "flex")]
pub(crate) fn threads_for(fmas: usize) -> usize {
    if fmas >= PARALLEL_MIN_FMAS {
        rayon::current_num_threads()
    } else {
        1
    }
}

/// `a` and `b` side by side on rayon's pool when `work` (multiply-adds of each) is at least
/// `PARALLEL_MIN_FMAS`, else one after the other.
pub(crate) fn join<A: Send, B: Send>(
    work: usize,
    a: impl FnOnce() -> A + Send,
    b: impl FnOnce() -> B + Send,
) -> (A, B) {
    #[cfg(feature = "flex")]
    if threads_for(work) > 1 {
        start_polling();
        return rayon::join(a, b);
    }
    let _ = work;
    (a(), b())
}

#[cfg(feature = "flex")]
pub(crate) use polling::{run_forward, start_polling};

#[cfg(feature = "flex")]
mod polling {
    use std::cell::RefCell;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// How long a poller looks for work without finding any before it lets its thread sleep:
    /// a long serial stretch does not keep a core busy, and a poller that a thread picked up
    /// while waiting inside another job (possible with three threads or more) cannot hold that
    /// job up for longer.
    const POLL_IDLE_LIMIT: Duration = Duration::from_micros(500);

    /// The forward running on this thread: set when it returns, and whether its pollers run.
    struct Forward {
        done: Arc<AtomicBool>,
        polling: bool,
    }

    thread_local! {
        static FORWARD: RefCell<Option<Forward>> = const { RefCell::new(None) };
    }

    /// Runs a model's `forward` on this pool thread (see the module docs). A forward called from
    /// inside another's runs as part of it.
    pub(crate) fn run_forward<R>(forward: impl FnOnce() -> R) -> R {
        if FORWARD.with_borrow(Option::is_some) {
            return forward();
        }
        FORWARD.set(Some(Forward { done: Arc::new(AtomicBool::new(false)), polling: false }));
        /// Stops the pollers however `forward` ends (a panic included).
        struct Finish;
        impl Drop for Finish {
            fn drop(&mut self) {
                if let Some(forward) = FORWARD.take() {
                    forward.done.store(true, Ordering::Release);
                }
            }
        }
        let _finish = Finish;
        forward()
    }

    /// Sets the pool's other threads polling for work until the running forward returns (once
    /// per forward; nothing outside one). The pollers are queued on this thread before the
    /// parallel op that follows, so another thread's first steal takes one (rayon steals the
    /// oldest job first); one that this thread pops itself returns at once.
    pub(crate) fn start_polling() {
        FORWARD.with_borrow_mut(|forward| {
            let Some(forward) = forward.as_mut().filter(|f| !f.polling) else { return };
            forward.polling = true;
            let caller = rayon::current_thread_index();
            for _ in 1..rayon::current_num_threads() {
                let done = forward.done.clone();
                rayon::spawn(move || poll(&done, caller));
            }
        })
    }

    /// Runs pending jobs of the pool (rayon's `yield_now`), else yields the core, until `done`
    /// or `POLL_IDLE_LIMIT` without work.
    fn poll(done: &AtomicBool, caller: Option<usize>) {
        if rayon::current_thread_index() == caller {
            return;
        }
        let mut idle_since = None;
        while !done.load(Ordering::Acquire) {
            if rayon::yield_now() == Some(rayon::Yield::Executed) {
                idle_since = None;
                continue;
            }
            if idle_since.get_or_insert_with(Instant::now).elapsed() > POLL_IDLE_LIMIT {
                return;
            }
            std::thread::yield_now();
        }
    }

    #[cfg(test)]
    mod tests {
        use super::{run_forward, start_polling};

        /// `forward`'s result comes back and its parallel work is done whatever the pool's size,
        /// with pollers started before the work (as the kernels start them) or not at all.
        #[test]
        fn a_forward_with_pollers_does_its_parallel_work_and_returns() {
            use rayon::prelude::*;
            for threads in [1, 2, 3] {
                let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("a pool");
                for round in 0..20u64 {
                    let sum: u64 = pool.install(|| {
                        run_forward(|| {
                            if round % 2 == 0 {
                                start_polling();
                            }
                            let inner = |i: u64| (0..i).into_par_iter().map(|j| j * round).sum::<u64>();
                            (0..64u64).into_par_iter().map(inner).sum()
                        })
                    });
                    let want: u64 = (0..64u64).map(|i| (0..i).map(|j| j * round).sum::<u64>()).sum();
                    assert_eq!(sum, want, "{threads} threads, round {round}");
                }
            }
        }
    }
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;

    #[test]
    fn jobs_hold_at_least_the_minimum_work() {
        // ceil(min_work / work_per_item) items each; an item of no work counts as one.
        assert_eq!(job_len(1000, 10, 64), 7);
        assert_eq!(job_len(1000, 64, 64), 1);
        assert_eq!(job_len(1000, 100, 64), 1);
        assert_eq!(job_len(3, 0, 64), 64);
    }

    #[test]
    fn small_products_stay_on_the_calling_thread() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(3).build().expect("a pool");
        assert_eq!(pool.install(|| threads_for(PARALLEL_MIN_FMAS - 1)), 1);
        assert_eq!(pool.install(|| threads_for(PARALLEL_MIN_FMAS)), 3);
    }

    #[test]
    fn join_returns_both_results_whatever_the_work() {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().expect("a pool");
        for work in [0, PARALLEL_MIN_FMAS] {
            assert_eq!(pool.install(|| run_forward(|| join(work, || 1, || "two"))), (1, "two"));
        }
    }
}
