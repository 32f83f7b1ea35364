//! The in-flight window: fixed, or adaptive (additive increase, multiplicative decrease).

use std::time::Duration;

use crate::options::Concurrency;

/// How many requests may be in flight, adjusted from the outcome of each request.
#[derive(Debug, Clone)]
pub(crate) struct Window {
    size: f64,
    max: f64,
    adaptive: bool,
    /// Best latency seen recently (slowly forgotten, so a changed cluster is relearned).
    best_latency: Option<f64>,
    /// Moving average of recent latencies.
    recent_latency: Option<f64>,
    /// Completions still to come before the window may shrink again: one shrink per window of
    /// requests, so a burst of failures of requests sent together counts once.
    shrink_cooldown: usize,
}

/// Latency above this multiple of the best latency stops the growth.
const LATENCY_TOLERANCE: f64 = 2.0;

impl Window {
    pub(crate) fn new(concurrency: Concurrency) -> Self {
        let (size, max, adaptive) = match concurrency {
            Concurrency::Fixed(n) => (n.max(1), n.max(1), false),
            Concurrency::Adaptive { initial, max } => {
                let max = max.max(1);
                (initial.clamp(1, max), max, true)
            }
        };
        Window {
            size: size as f64,
            max: max as f64,
            adaptive,
            best_latency: None,
            recent_latency: None,
            shrink_cooldown: 0,
        }
    }

    /// Requests that may be in flight now.
    pub(crate) fn size(&self) -> usize {
        self.size as usize
    }

    /// A request was acknowledged after `latency`.
    pub(crate) fn on_success(&mut self, latency: Duration) {
        self.shrink_cooldown = self.shrink_cooldown.saturating_sub(1);
        if !self.adaptive {
            return;
        }
        let latency = latency.as_secs_f64();
        let best = match self.best_latency {
            Some(best) if best <= latency => best + (latency - best) * 0.0001,
            _ => latency,
        };
        self.best_latency = Some(best);
        let recent = match self.recent_latency {
            Some(recent) => recent + (latency - recent) * 0.05,
            None => latency,
        };
        self.recent_latency = Some(recent);
        if recent <= best * LATENCY_TOLERANCE {
            self.size = (self.size + 1.0 / self.size).min(self.max);
        }
    }

    /// A request failed with a sign of overload (Overloaded, a timeout, Unavailable, a lost connection).
    pub(crate) fn on_congestion(&mut self) {
        if !self.adaptive || self.shrink_cooldown > 0 {
            return;
        }
        self.size = (self.size / 2.0).max(1.0);
        self.shrink_cooldown = self.size();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn a_fixed_window_never_changes() {
        let mut window = Window::new(Concurrency::Fixed(100));
        window.on_congestion();
        window.on_success(MS);
        assert_eq!(window.size(), 100);
        assert_eq!(Window::new(Concurrency::Fixed(0)).size(), 1);
    }

    #[test]
    fn the_adaptive_window_grows_by_one_per_window_while_latency_holds() {
        let mut window = Window::new(Concurrency::Adaptive {
            initial: 10,
            max: 12,
        });
        for _ in 0..11 {
            window.on_success(MS);
        }
        assert_eq!(window.size(), 11);
        for _ in 0..1000 {
            window.on_success(MS);
        }
        assert_eq!(window.size(), 12);
    }

    #[test]
    fn the_adaptive_window_halves_once_per_burst_of_congestion() {
        let mut window = Window::new(Concurrency::Adaptive {
            initial: 64,
            max: 512,
        });
        for _ in 0..20 {
            window.on_congestion();
        }
        assert_eq!(window.size(), 32);
        for _ in 0..32 {
            window.on_success(MS);
        }
        window.on_congestion();
        assert_eq!(window.size(), 16);
        for _ in 0..100 {
            window.on_congestion();
            for _ in 0..64 {
                window.on_success(MS);
            }
        }
        assert!(window.size() >= 1);
    }

    #[test]
    fn the_adaptive_window_stops_growing_when_latency_rises() {
        let mut window = Window::new(Concurrency::Adaptive {
            initial: 20,
            max: 512,
        });
        for _ in 0..200 {
            window.on_success(MS);
        }
        let grown = window.size();
        assert!(grown > 20);
        for _ in 0..2000 {
            window.on_success(10 * MS);
        }
        assert_eq!(window.size(), grown);
        for _ in 0..2000 {
            window.on_success(MS);
        }
        assert!(window.size() > grown);
    }
}
