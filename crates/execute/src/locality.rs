//! Whether PostgreSQL runs on this machine, so shares its cores: the URL names only
//! this machine, and the server, asked where it was reached, says a loopback
//! address or a Unix socket. The second question catches a local proxy in front
//! of a remote server (PgBouncer beside Grafton, the Cloud SQL Auth Proxy's socket,
//! a tunnel): the server it reaches was reached over the network.

use crate::pg_pool::Object;
use std::net::IpAddr;
use tokio_postgres::config::Host;
use tokio_postgres::SimpleQueryMessage;

/// Whether `config` connects only to this machine and the server `client` reached
/// says it was reached on it. Any doubt (an error, an unknown name) says no.
pub(crate) async fn on_this_host(config: &tokio_postgres::Config, client: &Object) -> bool {
    url_on_this_host(config) && server_reached_locally(client).await
}

/// Every host (and `hostaddr`, which wins over the name) is a Unix socket (also
/// libpq's default, no host), `localhost` or a loopback address.
fn url_on_this_host(config: &tokio_postgres::Config) -> bool {
    let addresses = config.get_hostaddrs();
    if !addresses.is_empty() {
        return addresses.iter().all(IpAddr::is_loopback);
    }
    config.get_hosts().iter().all(|host| match host {
        Host::Unix(_) => true,
        Host::Tcp(name) => {
            name.eq_ignore_ascii_case("localhost")
                || (name.trim_start_matches('[').trim_end_matches(']'))
                    .parse::<IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback())
        }
    })
}

/// The server's own answer: `inet_server_addr()` is NULL on a Unix socket, else the
/// address the connection reached.
async fn server_reached_locally(client: &Object) -> bool {
    let Ok(messages) = client.simple_query("SELECT host(inet_server_addr())").await else {
        return false;
    };
    messages.iter().any(|m| match m {
        SimpleQueryMessage::Row(row) => match row.get(0) {
            None => true,
            Some(address) => address.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback()),
        },
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::url_on_this_host;

    fn local(url: &str) -> bool {
        url_on_this_host(&url.parse().expect("a URL"))
    }

    #[test]
    fn names_and_addresses_of_this_machine() {
        assert!(local("postgres://u@127.0.0.1:5432/db"));
        assert!(local("postgres://u@localhost/db"));
        assert!(local("postgres://u@[::1]:5432/db"));
        assert!(local("host=/var/run/postgresql dbname=db"));
        assert!(!local("postgres://u@10.0.0.5/db"));
        assert!(!local("postgres://u@db.example.com/db"));
        assert!(!local("postgres://u@localhost,10.0.0.5/db"));
        // hostaddr is where the connection goes; the name is only for TLS.
        assert!(!local("postgres://u@localhost/db?hostaddr=10.0.0.5"));
        assert!(local("postgres://u@db.example.com/db?hostaddr=127.0.0.1"));
    }
}
