//! Group commit of log appends: every group's `append` writes its entries buffered, then hands its flush callback
//! here; one task syncs the engine's log once for every callback waiting and then acknowledges them all. A sync
//! covers every batch written before it, so an acknowledged entry is durable.

use std::sync::Arc;

use openraft::storage::LogFlushed;
use quiver_kv::KvEngine;
use tokio::sync::mpsc;

use crate::TypeConfig;

pub struct LogSyncer {
    tx: mpsc::UnboundedSender<LogFlushed<TypeConfig>>,
}

impl LogSyncer {
    /// Starts the syncing task on the current tokio runtime.
    pub fn start(engine: Arc<dyn KvEngine>) -> LogSyncer {
        let (tx, mut rx) = mpsc::unbounded_channel::<LogFlushed<TypeConfig>>();
        tokio::spawn(async move {
            let mut waiting = Vec::new();
            while rx.recv_many(&mut waiting, usize::MAX).await > 0 {
                let engine = engine.clone();
                // The sync blocks on the disk: off the runtime's worker threads.
                let result = match tokio::task::spawn_blocking(move || engine.sync()).await {
                    Ok(Ok(())) => Ok(()),
                    Ok(Err(e)) => Err(std::io::Error::other(e.to_string())),
                    Err(e) => Err(std::io::Error::other(e.to_string())),
                };
                for callback in waiting.drain(..) {
                    callback.log_io_completed(match &result {
                        Ok(()) => Ok(()),
                        Err(e) => Err(std::io::Error::other(e.to_string())),
                    });
                }
            }
        });
        LogSyncer { tx }
    }

    /// Acknowledges `callback` once everything written before this call is durable.
    pub fn after_sync(&self, callback: LogFlushed<TypeConfig>) -> Result<(), std::io::Error> {
        self.tx.send(callback).map_err(|_| std::io::Error::other("the log syncer has stopped"))
    }
}
