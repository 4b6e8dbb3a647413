//! An in-memory engine for tests: a `BTreeMap` behind a lock. Not durable.

use crate::{CompactionFilter, KvEngine, KvResult, ScanFn, WriteBatch, WriteOp};
use std::collections::BTreeMap;
use std::ops::Bound;
use std::sync::RwLock;

#[derive(Default)]
pub struct MemEngine {
    map: RwLock<BTreeMap<Vec<u8>, Vec<u8>>>,
    filter: RwLock<Option<CompactionFilter>>,
}

impl MemEngine {
    pub fn new() -> MemEngine {
        MemEngine::default()
    }
}

impl KvEngine for MemEngine {
    fn get(&self, key: &[u8]) -> KvResult<Option<Vec<u8>>> {
        Ok(self.map.read().expect("lock poisoned").get(key).cloned())
    }

    fn write_buffered(&self, batch: WriteBatch) -> KvResult<()> {
        let mut map = self.map.write().expect("lock poisoned");
        for op in batch.ops {
            match op {
                WriteOp::Put(k, v) => {
                    map.insert(k, v);
                }
                WriteOp::Delete(k) => {
                    map.remove(&k);
                }
                WriteOp::DeleteRange(start, end) => {
                    let doomed: Vec<Vec<u8>> = map
                        .range::<[u8], _>((Bound::Included(&start[..]), Bound::Excluded(&end[..])))
                        .map(|(k, _)| k.clone())
                        .collect();
                    for k in doomed {
                        map.remove(&k);
                    }
                }
            }
        }
        Ok(())
    }

    fn sync(&self) -> KvResult<()> {
        Ok(())
    }

    fn scan_range(&self, start: &[u8], end: &[u8], f: &mut ScanFn<'_>) -> KvResult<()> {
        if start >= end {
            return Ok(());
        }
        let map = self.map.read().expect("lock poisoned");
        for (k, v) in map.range::<[u8], _>((Bound::Included(start), Bound::Excluded(end))) {
            if !f(k, v) {
                break;
            }
        }
        Ok(())
    }

    /// There are no files to rewrite: compaction is the filter applied to the range.
    fn compact_range(&self, start: &[u8], end: &[u8]) -> KvResult<()> {
        let Some(filter) = self.filter.read().expect("lock poisoned").clone() else { return Ok(()) };
        if start >= end {
            return Ok(());
        }
        let mut map = self.map.write().expect("lock poisoned");
        let doomed: Vec<Vec<u8>> = map
            .range::<[u8], _>((Bound::Included(start), Bound::Excluded(end)))
            .filter(|(k, v)| filter(k, v))
            .map(|(k, _)| k.clone())
            .collect();
        for k in doomed {
            map.remove(&k);
        }
        Ok(())
    }

    fn set_compaction_filter(&self, filter: Option<CompactionFilter>) {
        *self.filter.write().expect("lock poisoned") = filter;
    }

    fn name(&self) -> &'static str {
        "memory"
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn conformance() {
        crate::conformance::run_all(&|| Box::new(super::MemEngine::new()));
    }
}
