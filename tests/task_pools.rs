//! The task pools a headless simulation makes for itself (`sim::parallel`): on `T` threads a
//! compute pool of `T − 1` (the calling thread works too; at least one) and an IO and an
//! async-compute pool of one thread each, which a plugin added by an extension may use; later
//! simulations of the process keep them. Its own file, so that no other test of the process has
//! made the pools first.

use bevy::tasks::{AsyncComputeTaskPool, ComputeTaskPool, IoTaskPool};
use pandemic_boids::sim::parallel::{cores, init_headless_task_pools, serial, workers};

#[test]
fn three_threads_give_a_compute_pool_of_two_and_one_thread_each_for_io_and_async_work() {
    init_headless_task_pools(Some(3));
    assert_eq!(ComputeTaskPool::get().thread_num(), 2);
    assert_eq!(IoTaskPool::get().thread_num(), 1);
    assert_eq!(AsyncComputeTaskPool::get().thread_num(), 1);
    assert_eq!(workers(), 3);
    assert!(!serial());
    // Another simulation of the process asking for other threads keeps the first pools.
    init_headless_task_pools(Some(1));
    assert_eq!(ComputeTaskPool::get().thread_num(), 2);
    assert_eq!(workers(), 3);
    // The process's cores, as the standard library gives them, every time.
    let asked = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert_eq!(cores(), asked);
    assert_eq!(cores(), asked);
}
