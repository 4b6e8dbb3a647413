//! Users' passwords: stored only as argon2id hashes in the PHC string form (`$argon2id$v=19$m=...,t=...,p=...$salt$hash`),
//! each with a random salt, with argon2's recommended cost (19 MiB, 2 passes), so a stolen catalog does not yield
//! passwords cheaply. Never stored in the clear, nor as MD5.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

/// The PHC string of `password`'s argon2id hash, with a fresh random salt.
pub fn hash(password: &str) -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|e| format!("cannot draw a salt: {e}"))?;
    let salt = SaltString::encode_b64(&bytes).map_err(|e| format!("cannot encode a salt: {e}"))?;
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| format!("cannot hash a password: {e}"))
}

/// Whether `password` is the one `stored` (a PHC string from [`hash`]) was made from; false for a damaged hash.
pub fn verify(password: &str, stored: &str) -> bool {
    match PasswordHash::new(stored) {
        Ok(h) => Argon2::default().verify_password(password.as_bytes(), &h).is_ok(),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_their_password_only() {
        let h = hash("nebula").unwrap();
        assert!(h.starts_with("$argon2id$"), "{h}");
        assert!(!h.contains("nebula"));
        assert!(verify("nebula", &h));
        assert!(!verify("Nebula", &h));
        assert!(!verify("", &h));
        // Salted: the same password hashes differently each time.
        assert_ne!(hash("nebula").unwrap(), h);
        assert!(!verify("nebula", "not a hash"));
    }
}
