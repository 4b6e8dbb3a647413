//! Sign-in with authorization on (`--enable-authorize`): a user name and password checked against the catalog's
//! argon2id hash, with NebulaGraph's errors and its optional lockout (`--failed-login-attempts` wrong passwords in
//! a row lock the user for `--password-lock-time-in-secs`; either 0 turns lockout off, as in NebulaGraph).
//!
//! argon2 is slow on purpose (tens of milliseconds), so a password that verified once is remembered as a keyed
//! fingerprint of (user, password, stored hash): the HTTP API, which signs in on every request with basic auth,
//! pays the hash once per password rather than per request. The fingerprint's key is drawn at start, so it cannot
//! be computed outside this process; a changed password changes the stored hash and so misses the memory.

use quiver_api::Catalog;
use std::collections::HashMap;
use std::hash::BuildHasher;
use std::sync::{Arc, Mutex};
use std::time::Instant;

#[derive(Default)]
struct Attempts {
    remaining: u32,
    locked_at: Option<Instant>,
}

pub struct Authenticator {
    catalog: Arc<dyn Catalog>,
    /// Password hashes computed at once: each takes 19 MiB and tens of milliseconds, so unbounded sign-ins could
    /// starve queries of memory and of the blocking pool.
    hashing: Arc<tokio::sync::Semaphore>,
    attempts_max: u32,
    lock_secs: u64,
    attempts: Mutex<HashMap<String, Attempts>>,
    verified: Mutex<std::collections::HashSet<u64>>,
    key: std::collections::hash_map::RandomState,
}

impl Authenticator {
    pub fn new(catalog: Arc<dyn Catalog>, attempts_max: u32, lock_secs: u64) -> Authenticator {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Authenticator {
            catalog,
            hashing: Arc::new(tokio::sync::Semaphore::new(cores)),
            attempts_max,
            lock_secs,
            attempts: Mutex::default(),
            verified: Mutex::default(),
            key: std::collections::hash_map::RandomState::new(),
        }
    }

    fn fingerprint(&self, user: &str, password: &str, stored: &str) -> u64 {
        self.key.hash_one((user, password, stored))
    }

    /// [`Authenticator::check`] on the blocking pool, at most one hash per core at a time.
    pub async fn check_async(self: Arc<Self>, user: String, password: String) -> Result<(), String> {
        let permit = self.hashing.clone().acquire_owned().await.map_err(|e| format!("sign-in failed: {e}"))?;
        tokio::task::spawn_blocking(move || {
            let _permit = permit;
            self.check(&user, &password)
        })
        .await
        .unwrap_or_else(|e| Err(format!("sign-in failed: {e}")))
    }

    /// Checks a sign-in; the error is NebulaGraph's text (its code is `E_BAD_USERNAME_PASSWORD`). Blocking: it may
    /// hash a password. With lockout on, an attempt is counted before the password is checked, so concurrent wrong
    /// guesses cannot all slip in before the lock.
    pub fn check(&self, user: &str, password: &str) -> Result<(), String> {
        let Some(desc) = self.catalog.user(user) else { return Err("User not exist".into()) };
        let lockout = self.attempts_max > 0 && self.lock_secs > 0;
        if lockout {
            let mut attempts = self.attempts.lock().unwrap_or_else(|p| p.into_inner());
            let a =
                attempts.entry(user.to_string()).or_insert(Attempts { remaining: self.attempts_max, locked_at: None });
            if let Some(at) = a.locked_at {
                let left = self.lock_secs as i64 - at.elapsed().as_secs() as i64;
                if left > 0 {
                    return Err(format!(
                        "{} times consecutive incorrect passwords has been input, user name: {user} has been locked, \
                         try again in {left} seconds",
                        self.attempts_max
                    ));
                }
                *a = Attempts { remaining: self.attempts_max, locked_at: None };
            }
            if a.remaining == 0 {
                // Every attempt is taken by guesses being checked now.
                return Err("Invalid password, remaining attempts: 0".into());
            }
            // Reserved: given back if the password is right.
            a.remaining -= 1;
        }
        let fp = self.fingerprint(user, password, &desc.password_hash);
        let known = self.verified.lock().unwrap_or_else(|p| p.into_inner()).contains(&fp);
        if known || quiver_common::password::verify(password, &desc.password_hash) {
            if !known {
                let mut v = self.verified.lock().unwrap_or_else(|p| p.into_inner());
                if v.len() >= quiver_common::limits::AUTH_VERIFIED_MAX {
                    v.clear();
                }
                v.insert(fp);
            }
            if lockout {
                self.attempts.lock().unwrap_or_else(|p| p.into_inner()).remove(user);
            }
            return Ok(());
        }
        if !lockout {
            return Err("Invalid password".into());
        }
        let mut attempts = self.attempts.lock().unwrap_or_else(|p| p.into_inner());
        let a = attempts.entry(user.to_string()).or_insert(Attempts { remaining: 0, locked_at: None });
        if a.remaining == 0 && a.locked_at.is_none() {
            a.locked_at = Some(Instant::now());
            return Err(format!(
                "{} times consecutive incorrect passwords has been input, user name: {user} has been locked, try \
                 again in {} seconds",
                self.attempts_max, self.lock_secs
            ));
        }
        Err(format!("Invalid password, remaining attempts: {}", a.remaining))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A burst of concurrent wrong guesses gets no more than the allowed attempts checked, and then the user is
    /// locked, the right password included.
    #[test]
    fn concurrent_guesses_do_not_slip_past_the_lockout() {
        let kv: Arc<dyn quiver_kv::KvEngine> = Arc::new(quiver_kv::MemEngine::new());
        let catalog = Arc::new(quiver_meta::MetaStore::open(kv).unwrap());
        catalog.create_user("bob", quiver_common::password::hash("right").unwrap(), false).unwrap();
        let auth = Authenticator::new(catalog, 3, 600);
        let results: Vec<String> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..12)
                .map(|i| {
                    let auth = &auth;
                    s.spawn(move || auth.check("bob", &format!("wrong{i}")).unwrap_err())
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        // Each count of remaining attempts is reported once at most; every other guess was refused unchecked or
        // locked out.
        for n in [1, 2] {
            let with_n = results.iter().filter(|r| r.ends_with(&format!("remaining attempts: {n}"))).count();
            assert!(with_n <= 1, "{results:?}");
        }
        assert!(
            results
                .iter()
                .all(|r| r.starts_with("Invalid password, remaining attempts: ") || r.contains("has been locked")),
            "{results:?}"
        );
        assert!(auth.check("bob", "right").unwrap_err().contains("has been locked"));
    }
}
