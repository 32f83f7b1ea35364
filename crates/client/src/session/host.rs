//! Contact points.

use std::fmt;

use crate::error::{LoadError, LoadErrorKind};

/// The CQL port used when a host names none.
pub const DEFAULT_PORT: u16 = 9042;

/// A contact point: a host name or IP address and a port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Host {
    /// Host name or IP address (IPv6 without brackets).
    pub name: String,
    /// CQL port.
    pub port: u16,
}

impl Host {
    /// Parses `HOST[:PORT]`, `[IPV6]:PORT` or a bare IPv6 address; the port defaults to 9042.
    pub fn parse(text: &str) -> Result<Host, LoadError> {
        let text = text.trim();
        let invalid = |why: &str| {
            LoadError::new(
                LoadErrorKind::InvalidOption,
                format!("invalid host {text:?}: {why}"),
            )
        };
        let (name, port) = if let Some(rest) = text.strip_prefix('[') {
            let (name, after) = rest.split_once(']').ok_or_else(|| invalid("missing ']'"))?;
            match after {
                "" => (name, None),
                _ => (
                    name,
                    Some(
                        after
                            .strip_prefix(':')
                            .ok_or_else(|| invalid("expected ':PORT' after ']'"))?,
                    ),
                ),
            }
        } else if text.matches(':').count() > 1 {
            (text, None)
        } else {
            match text.split_once(':') {
                Some((name, port)) => (name, Some(port)),
                None => (text, None),
            }
        };
        if name.is_empty() {
            return Err(invalid("empty host name"));
        }
        let port = match port {
            None => DEFAULT_PORT,
            Some(port) => match port.parse::<u16>() {
                Ok(port) if port > 0 => port,
                _ => return Err(invalid("the port must be a number from 1 to 65535")),
            },
        };
        Ok(Host {
            name: name.to_owned(),
            port,
        })
    }

    /// Parses a comma-separated list of hosts (at least one).
    pub fn parse_list(text: &str) -> Result<Vec<Host>, LoadError> {
        let hosts = text
            .split(',')
            .filter(|part| !part.trim().is_empty())
            .map(Host::parse)
            .collect::<Result<Vec<_>, _>>()?;
        if hosts.is_empty() {
            return Err(LoadError::new(
                LoadErrorKind::InvalidOption,
                "no host given",
            ));
        }
        Ok(hosts)
    }
}

impl fmt::Display for Host {
    /// `name:port`, with brackets around an IPv6 address.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.name.contains(':') {
            write!(f, "[{}]:{}", self.name, self.port)
        } else {
            write!(f, "{}:{}", self.name, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_parse_with_default_port_and_ipv6() {
        let host = |name: &str, port| Host {
            name: name.into(),
            port,
        };
        assert_eq!(Host::parse("db1").unwrap(), host("db1", 9042));
        assert_eq!(
            Host::parse("10.0.0.1:19042").unwrap(),
            host("10.0.0.1", 19042)
        );
        assert_eq!(Host::parse("[::1]:9043").unwrap(), host("::1", 9043));
        assert_eq!(Host::parse("[::1]").unwrap(), host("::1", 9042));
        assert_eq!(Host::parse("fe80::1").unwrap(), host("fe80::1", 9042));
        assert_eq!(
            Host::parse_list("a, b:1,").unwrap(),
            vec![host("a", 9042), host("b", 1)]
        );
        assert_eq!(Host::parse("[::1]:9043").unwrap().to_string(), "[::1]:9043");
        for bad in [
            "",
            "a:",
            "a:0",
            "a:70000",
            "a:x",
            "[::1",
            "[::1]9042",
            ":9042",
        ] {
            let error = Host::parse(bad).unwrap_err();
            assert_eq!(error.kind(), LoadErrorKind::InvalidOption, "{bad}");
        }
        assert!(Host::parse_list(" , ").is_err());
    }
}
