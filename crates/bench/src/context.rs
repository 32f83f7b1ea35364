//! What a result file says of the machine a case ran on: the client's CPU, cores and memory, and
//! its load average, read from Linux's `/proc` (absent elsewhere).

/// The client machine: `cpu` (the model name), `cores` (what this process may use) and
/// `memory_gib`, each left out when it cannot be read.
pub fn client_machine() -> serde_json::Value {
    let mut machine = serde_json::Map::new();
    if let Some(model) = proc_field("/proc/cpuinfo", "model name") {
        machine.insert("cpu".into(), model.into());
    }
    if let Ok(cores) = std::thread::available_parallelism() {
        machine.insert("cores".into(), cores.get().into());
    }
    let memory = proc_field("/proc/meminfo", "MemTotal")
        .and_then(|kib| kib.trim_end_matches("kB").trim().parse::<f64>().ok());
    if let Some(kib) = memory {
        let gib = (kib / (1024.0 * 1024.0) * 10.0).round() / 10.0;
        machine.insert("memory_gib".into(), gib.into());
    }
    machine.into()
}

/// The load average over 1, 5 and 15 minutes, when the system says.
pub fn load_average() -> Option<[f64; 3]> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    let mut fields = text.split_whitespace().map(str::parse::<f64>);
    Some([
        fields.next()?.ok()?,
        fields.next()?.ok()?,
        fields.next()?.ok()?,
    ])
}

/// The value of the first line `name : value` of a `/proc` file.
fn proc_field(file: &str, name: &str) -> Option<String> {
    let text = std::fs::read_to_string(file).ok()?;
    text.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        (key.trim() == name).then(|| value.trim().to_owned())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machine_is_read_where_proc_has_it() {
        let machine = client_machine();
        assert!(machine["cores"].as_u64().is_some_and(|n| n >= 1));
        if std::path::Path::new("/proc/meminfo").exists() {
            assert!(machine["memory_gib"].as_f64().is_some_and(|g| g > 0.0));
            assert!(load_average().is_some_and(|l| l.iter().all(|x| *x >= 0.0)));
        }
    }
}
