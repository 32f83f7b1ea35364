//! The login of a cluster that uses `PasswordAuthenticator`.

use std::fmt;

use crate::error::{LoadError, LoadErrorKind};

/// The environment variable that holds the password of a login.
pub const PASSWORD_VARIABLE: &str = "CQLWIRE_PASSWORD";

/// A password given by the caller; never printed by `Debug`.
#[derive(Clone, PartialEq, Eq)]
pub struct Password(String);

impl Password {
    /// Wraps a password read by the caller (from an environment variable or a prompt).
    pub fn new(password: impl Into<String>) -> Self {
        Password(password.into())
    }

    /// The password in [`PASSWORD_VARIABLE`], when it is set (an error when it is not UTF-8).
    pub fn from_environment() -> Result<Option<Password>, LoadError> {
        match std::env::var_os(PASSWORD_VARIABLE) {
            None => Ok(None),
            Some(value) => value.into_string().map(|p| Some(Password(p))).map_err(|_| {
                LoadError::new(
                    LoadErrorKind::InvalidOption,
                    format!("{PASSWORD_VARIABLE} is not valid UTF-8"),
                )
            }),
        }
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Password {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Password(***)")
    }
}

/// Login for `PasswordAuthenticator`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Credentials {
    /// Role name.
    pub username: String,
    /// Its password.
    pub password: Password,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_do_not_show_in_debug_output() {
        let credentials = Credentials {
            username: "loader".into(),
            password: Password::new("s3cret"),
        };
        assert!(!format!("{credentials:?}").contains("s3cret"));
    }
}
