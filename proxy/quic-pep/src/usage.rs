//! What the process holds right now, for the stats file: the heap malloc
//! has handed out and the tasks still alive. A soak compares them between
//! rounds to tell a leak from the allocator's slack, which VmRSS cannot.

use serde_json::{json, Value};

/// Bytes malloc has handed out and not had back (small chunks and mmapped
/// ones), over every arena.
pub fn heap_bytes() -> u64 {
    // SAFETY: mallinfo2 takes no arguments and only reads glibc's own
    // counters, under its arena locks.
    let m = unsafe { libc::mallinfo2() };
    (m.uordblks + m.hblkhd) as u64
}

/// Tasks alive on the runtime this is called from (None outside one).
pub fn tasks() -> Option<usize> {
    tokio::runtime::Handle::try_current()
        .ok()
        .map(|h| h.metrics().num_alive_tasks())
}

/// `{"heap_bytes": …, "tasks": …}`
pub fn json() -> Value {
    json!({ "heap_bytes": heap_bytes(), "tasks": tasks() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_live_allocation_shows_in_the_heap() {
        // The heap is the process's: the other tests, running on other
        // threads, allocate and free while this one measures. A block far
        // larger than what they hold, judged at half its size, keeps their
        // churn out of the verdict.
        const BLOCK: u64 = 256 << 20;
        let before = heap_bytes();
        let held = std::hint::black_box(vec![1u8; BLOCK as usize]);
        let during = heap_bytes();
        drop(held);
        let after = heap_bytes();
        assert!(during >= before + BLOCK / 2, "{before} -> {during}");
        assert!(after + BLOCK / 2 <= during, "freed: {during} -> {after}");
    }

    #[tokio::test(flavor = "current_thread")]
    async fn tasks_count_what_is_alive() {
        assert_eq!(tasks(), Some(0));
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let t = tokio::spawn(async move {
            let _ = rx.await;
        });
        assert_eq!(tasks(), Some(1));
        tx.send(()).unwrap();
        t.await.unwrap();
        assert_eq!(tasks(), Some(0));
        assert_eq!(std::thread::spawn(tasks).join().unwrap(), None);
    }
}
