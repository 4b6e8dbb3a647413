//! Errors with NebulaGraph's codes and message prefixes.
//!
//! Every operating error a user can see is a [`QError`]: a stable [`ErrorCode`] (the number NebulaGraph puts on
//! the wire) and a message that already carries NebulaGraph's class prefix (`SyntaxError: `, `SemanticError: `,
//! ...). Programmer errors are assertions, not `QError`s.

use std::fmt;

/// NebulaGraph's error codes, as they appear in responses (`errors[].code`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[repr(i32)]
pub enum ErrorCode {
    Succeeded = 0,
    SpaceNotFound = -5,
    TagNotFound = -6,
    EdgeNotFound = -7,
    BadUsernamePassword = -1001,
    SessionInvalid = -1002,
    SessionTimeout = -1003,
    SyntaxError = -1004,
    ExecutionError = -1005,
    StatementEmpty = -1006,
    BadPermission = -1008,
    SemanticError = -1009,
    StoreFailure = -2021,
    QueryTimeout = -1013,
    MemoryExceeded = -2600,
}

impl ErrorCode {
    pub fn as_i32(self) -> i32 {
        self as i32
    }

    /// The class name printed by the console before the code, as NebulaGraph's console does.
    pub fn class(self) -> &'static str {
        match self {
            ErrorCode::Succeeded => "OK",
            ErrorCode::SyntaxError => "SyntaxError",
            ErrorCode::SemanticError => "SemanticError",
            ErrorCode::StatementEmpty => "StatementEmpty",
            ErrorCode::BadPermission => "PermissionError",
            ErrorCode::BadUsernamePassword | ErrorCode::SessionInvalid | ErrorCode::SessionTimeout => "SessionError",
            _ => "ExecutionError",
        }
    }
}

/// A user-visible error: code plus full message (prefix included).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QError {
    pub code: ErrorCode,
    pub message: String,
}

pub type QResult<T> = Result<T, QError>;

impl QError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> QError {
        QError { code, message: message.into() }
    }

    /// `SyntaxError: <msg>` (-1004).
    pub fn syntax(msg: impl fmt::Display) -> QError {
        QError::new(ErrorCode::SyntaxError, format!("SyntaxError: {msg}"))
    }

    /// `SemanticError: <msg>` (-1009).
    pub fn semantic(msg: impl fmt::Display) -> QError {
        QError::new(ErrorCode::SemanticError, format!("SemanticError: {msg}"))
    }

    /// `PermissionError: <msg>` (-1008): what the user's roles do not allow.
    pub fn permission(msg: impl fmt::Display) -> QError {
        QError::new(ErrorCode::BadPermission, format!("PermissionError: {msg}"))
    }

    /// An execution error (-1005) whose message has no class prefix, like NebulaGraph's `Existed!`.
    pub fn execution(msg: impl Into<String>) -> QError {
        QError::new(ErrorCode::ExecutionError, msg)
    }

    /// `SpaceNotFound: SpaceName `s`` (-1005 on the wire, as NebulaGraph's graph service reports it).
    pub fn space_not_found(name: &str) -> QError {
        QError::execution(format!("SpaceNotFound: SpaceName `{name}`"))
    }

    /// The same error raised while executing rather than validating: NebulaGraph reports expression errors found
    /// on rows at run time (overflow, division by zero in a WHERE) as execution errors with the bare message.
    pub fn at_runtime(self) -> QError {
        match self.code {
            ErrorCode::SemanticError => {
                let msg = self.message.strip_prefix("SemanticError: ").unwrap_or(&self.message).to_string();
                QError::execution(msg)
            }
            _ => self,
        }
    }

    pub fn storage(msg: impl fmt::Display) -> QError {
        QError::new(ErrorCode::StoreFailure, format!("Storage Error: {msg}"))
    }

    pub fn not_supported(what: impl fmt::Display) -> QError {
        QError::semantic(format!("{what} is not supported yet"))
    }
}

impl fmt::Display for QError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for QError {}
