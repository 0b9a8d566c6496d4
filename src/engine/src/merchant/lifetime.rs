//! Work that runs on a thread of its own but must not outlive the runtime that started it.
//!
//! A server embedded in a test (or any caller that drops its runtime) would otherwise leave
//! such threads running, each polling the database through a pool it keeps alive.

use tokio::sync::oneshot;

/// Resolves when the runtime of the caller shuts down: a task on that runtime holds the
/// sender, and the runtime drops it on the way out.
pub fn ends_with_this_runtime() -> oneshot::Receiver<()> {
    let (keep, ended) = oneshot::channel::<()>();
    actix_rt::spawn(async move {
        let _keep = keep;
        std::future::pending::<()>().await
    });
    ended
}
