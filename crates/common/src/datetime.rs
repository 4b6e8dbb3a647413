//! Calendar values: `date`, `time`, `datetime` and `duration`, in UTC (NebulaGraph's default time zone).

use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct Date {
    pub year: i16,
    pub month: u8,
    pub day: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct Time {
    pub hour: u8,
    pub minute: u8,
    pub sec: u8,
    pub microsec: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct DateTime {
    pub date: Date,
    pub time: Time,
}

/// A duration: months kept apart from seconds, as in openCypher and NebulaGraph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct Duration {
    pub months: i32,
    pub seconds: i64,
    pub microseconds: i32,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let mp = (m as i64 + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146097 + doe - 719468
}

pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719468;
    let era = if z >= 0 { z } else { z - 146096 } / 146097;
    let doe = z - era * 146097;
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        _ if (y % 4 == 0 && y % 100 != 0) || y % 400 == 0 => 29,
        _ => 28,
    }
}

impl Date {
    pub fn new(year: i64, month: i64, day: i64) -> Option<Date> {
        if !(-32768..=32767).contains(&year) || !(1..=12).contains(&month) {
            return None;
        }
        if day < 1 || day > days_in_month(year, month as u32) as i64 {
            return None;
        }
        Some(Date { year: year as i16, month: month as u8, day: day as u8 })
    }

    pub fn to_days(&self) -> i64 {
        days_from_civil(self.year as i64, self.month as u32, self.day as u32)
    }

    pub fn from_days(days: i64) -> Option<Date> {
        // Years -32768 to 32767 lie within 13 million days of 1970; beyond, the civil arithmetic could overflow.
        if !(-13_000_000..=13_000_000).contains(&days) {
            return None;
        }
        let (y, m, d) = civil_from_days(days);
        Date::new(y, m as i64, d as i64)
    }

    /// Parses `YYYY-MM-DD` (also `YYYY-MM` and `YYYY`).
    pub fn parse(s: &str) -> Option<Date> {
        let s = s.trim();
        let (neg, body) = match s.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, s),
        };
        let mut parts = body.split('-');
        let y: i64 = parts.next()?.parse().ok()?;
        let m: i64 = match parts.next() {
            Some(p) => p.parse().ok()?,
            None => 1,
        };
        let d: i64 = match parts.next() {
            Some(p) => p.parse().ok()?,
            None => 1,
        };
        if parts.next().is_some() {
            return None;
        }
        Date::new(if neg { -y } else { y }, m, d)
    }

    /// `self + days` (NebulaGraph's `date + int` and `date - int`).
    pub fn add_days(&self, days: i64) -> Option<Date> {
        Date::from_days(self.to_days().checked_add(days)?)
    }

    /// NebulaGraph's `Date::addDuration` (`sign` -1 for `subDuration`): the months first, keeping the day of the
    /// month even past the month's end, then `duration.days()` whole days (seconds / 86400, truncated towards
    /// zero; the rest of the duration is ignored), an overflowing day rolling into the following months.
    pub fn add_duration(&self, d: &Duration, sign: i64) -> Option<Date> {
        let (year, month) = shift_months(self.year as i64, self.month as i64, d.months as i64 * sign)?;
        let days = (d.seconds / 86_400).checked_mul(sign)?;
        roll_days(year, month, (self.day as i64).checked_add(days)?)
    }
}

/// The year and month `months` after `year`-`month`.
fn shift_months(year: i64, month: i64, months: i64) -> Option<(i64, i64)> {
    let total = year.checked_mul(12)?.checked_add(month - 1)?.checked_add(months)?;
    Some((total.div_euclid(12), total.rem_euclid(12) + 1))
}

/// The date `day - 1` days after the first of `year`-`month`: a day past the month's end rolls forward into the
/// following months and a day below 1 back into the previous ones, as NebulaGraph's `addDuration` loops do.
fn roll_days(year: i64, month: i64, day: i64) -> Option<Date> {
    if !(-32768..=32767).contains(&year) {
        return None;
    }
    Date::from_days(days_from_civil(year, month as u32, 1).checked_add(day.checked_sub(1)?)?)
}

impl Time {
    pub fn new(hour: i64, minute: i64, sec: i64, microsec: i64) -> Option<Time> {
        if !(0..24).contains(&hour) || !(0..60).contains(&minute) || !(0..60).contains(&sec) {
            return None;
        }
        if !(0..1_000_000).contains(&microsec) {
            return None;
        }
        Some(Time { hour: hour as u8, minute: minute as u8, sec: sec as u8, microsec: microsec as u32 })
    }

    /// Parses `HH:MM[:SS[.ffffff]][(+|-)HH:MM]`; a time with a UTC offset is shifted to UTC (around the clock),
    /// as NebulaGraph's datetime parser does.
    pub fn parse(s: &str) -> Option<Time> {
        let (local, offset) = split_offset(s.trim())?;
        let t = Time::parse_local(local)?;
        Some(Time::from_micros(t.to_micros() - offset * 1_000_000))
    }

    fn parse_local(s: &str) -> Option<Time> {
        let mut parts = s.split(':');
        let h: i64 = parts.next()?.parse().ok()?;
        let m: i64 = parts.next()?.parse().ok()?;
        let (sec, micro) = match parts.next() {
            Some(p) => parse_seconds(p)?,
            None => (0, 0),
        };
        if parts.next().is_some() {
            return None;
        }
        Time::new(h, m, sec, micro)
    }

    pub fn to_micros(&self) -> i64 {
        ((self.hour as i64 * 60 + self.minute as i64) * 60 + self.sec as i64) * 1_000_000 + self.microsec as i64
    }

    pub fn from_micros(us: i64) -> Time {
        let us = us.rem_euclid(86_400_000_000);
        let secs = us / 1_000_000;
        Time {
            hour: (secs / 3600) as u8,
            minute: ((secs / 60) % 60) as u8,
            sec: (secs % 60) as u8,
            microsec: (us % 1_000_000) as u32,
        }
    }
}

/// A time's text without its time zone, and the zone's UTC offset in seconds (0 without one). The zone is an offset
/// (`+HH:MM` or `-HH:MM`), a region in brackets (`[Asia/Shanghai]`), or both, which must then agree, as in
/// NebulaGraph's datetime grammar. An hour past 23 or a minute past 59 in the offset is refused, as NebulaGraph's
/// `validateTime`; a region stands for its standard offset (NebulaGraph's `base_utc_offset`: no daylight saving),
/// and one NebulaGraph does not know is refused.
fn split_offset(s: &str) -> Option<(&str, i64)> {
    let (s, region) = match s.strip_suffix(']').and_then(|x| x.rsplit_once('[')) {
        Some((rest, name)) => (rest, Some(region_offset(name)?)),
        None => (s, None),
    };
    let (local, offset) = split_numeric_offset(s)?;
    match (offset, region) {
        (Some(o), Some(r)) if o != r => None,
        (o, r) => Some((local, o.or(r).unwrap_or(0))),
    }
}

/// A time's text without its `+HH:MM`/`-HH:MM` offset, and the offset in seconds if there is one.
fn split_numeric_offset(s: &str) -> Option<(&str, Option<i64>)> {
    let Some(at) = s.rfind(['+', '-']) else { return Some((s, None)) };
    let (h, m) = s[at + 1..].split_once(':')?;
    let digits = |x: &str| !x.is_empty() && x.len() <= 2 && x.bytes().all(|b| b.is_ascii_digit());
    if !digits(h) || !digits(m) {
        return None;
    }
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    if h > 23 || m > 59 {
        return None;
    }
    let secs = h * 3600 + m * 60;
    Some((&s[..at], Some(if s.as_bytes()[at] == b'-' { -secs } else { secs })))
}

/// The standard UTC offset, in seconds, of an IANA region (`Asia/Shanghai`), from the database NebulaGraph ships.
pub fn region_offset(name: &str) -> Option<i64> {
    static REGIONS: std::sync::OnceLock<std::collections::HashMap<&'static str, i64>> = std::sync::OnceLock::new();
    let regions = REGIONS.get_or_init(|| {
        include_str!("time_zones.txt")
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let (name, secs) = l.split_once(' ')?;
                Some((name, secs.parse().ok()?))
            })
            .collect()
    });
    regions.get(name).copied()
}

fn parse_seconds(p: &str) -> Option<(i64, i64)> {
    match p.split_once('.') {
        Some((s, frac)) => {
            if frac.is_empty() || frac.len() > 6 || !frac.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            let mut micro: i64 = frac.parse().ok()?;
            for _ in frac.len()..6 {
                micro *= 10;
            }
            Some((s.parse().ok()?, micro))
        }
        None => Some((p.parse().ok()?, 0)),
    }
}

impl DateTime {
    /// Parses `YYYY-MM-DDTHH:MM:SS[.ffffff][(+|-)HH:MM]` (a space also separates date and time; the time part is
    /// optional). A datetime with a UTC offset is shifted to UTC, its date with it, as NebulaGraph's datetime parser
    /// does (`datetime("2017-03-04T22:30:40.003000+08:00")` is `2017-03-04T14:30:40.003000`).
    pub fn parse(s: &str) -> Option<DateTime> {
        let s = s.trim();
        let (d, t) = match s.find(['T', ' ']) {
            Some(i) => (&s[..i], Some(&s[i + 1..])),
            None => (s, None),
        };
        let date = Date::parse(d)?;
        let (time, offset) = match t {
            Some(t) => {
                let (local, offset) = split_offset(t.trim())?;
                (Time::parse_local(local)?, offset)
            }
            None => (Time { hour: 0, minute: 0, sec: 0, microsec: 0 }, 0),
        };
        let local = DateTime { date, time };
        if offset == 0 {
            return Some(local);
        }
        DateTime::from_micros(local.to_micros() - offset * 1_000_000)
    }

    /// Seconds since the Unix epoch.
    pub fn to_timestamp(&self) -> i64 {
        self.date.to_days() * 86_400 + self.time.to_micros() / 1_000_000
    }

    pub fn to_micros(&self) -> i64 {
        self.date.to_days() * 86_400_000_000 + self.time.to_micros()
    }

    pub fn from_micros(us: i64) -> Option<DateTime> {
        let days = us.div_euclid(86_400_000_000);
        Some(DateTime { date: Date::from_days(days)?, time: Time::from_micros(us.rem_euclid(86_400_000_000)) })
    }

    pub fn from_timestamp(secs: i64) -> Option<DateTime> {
        DateTime::from_micros(secs.checked_mul(1_000_000)?)
    }

    /// NebulaGraph's `DateTime::addDuration` (`sign` -1 for `subDuration`): the months first, keeping the day of
    /// the month even past the month's end, then the seconds and microseconds, their carry in whole days rolling
    /// the date forward or back.
    pub fn add_duration(&self, d: &Duration, sign: i64) -> Option<DateTime> {
        let (year, month) = shift_months(self.date.year as i64, self.date.month as i64, d.months as i64 * sign)?;
        let delta = (d.seconds as i128 * 1_000_000 + d.microseconds as i128) * sign as i128;
        let micros = self.time.to_micros() as i128 + delta;
        let carry = i64::try_from(micros.div_euclid(86_400_000_000)).ok()?;
        let time = Time::from_micros(micros.rem_euclid(86_400_000_000) as i64);
        let date = roll_days(year, month, (self.date.day as i64).checked_add(carry)?)?;
        Some(DateTime { date, time })
    }
}

impl Time {
    /// NebulaGraph's `Time::addDuration`: the seconds and microseconds, wrapping around midnight; months are
    /// ignored.
    pub fn add_duration(&self, d: &Duration, sign: i64) -> Time {
        let delta = (d.seconds as i128 * 1_000_000 + d.microseconds as i128) * sign as i128;
        let micros = (self.to_micros() as i128 + delta).rem_euclid(86_400_000_000);
        Time::from_micros(micros as i64)
    }
}

impl Duration {
    pub fn zero() -> Duration {
        Duration { months: 0, seconds: 0, microseconds: 0 }
    }

    pub fn negate(&self) -> Duration {
        Duration { months: -self.months, seconds: -self.seconds, microseconds: -self.microseconds }
    }

    pub fn add(&self, o: &Duration) -> Option<Duration> {
        let mut micro = self.microseconds as i64 + o.microseconds as i64;
        let mut secs = self.seconds.checked_add(o.seconds)?;
        secs = secs.checked_add(micro.div_euclid(1_000_000))?;
        micro = micro.rem_euclid(1_000_000);
        Some(Duration { months: self.months.checked_add(o.months)?, seconds: secs, microseconds: micro as i32 })
    }
}

impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:04}-{:02}-{:02}", self.year, self.month, self.day)
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}:{:02}.{:06}", self.hour, self.minute, self.sec, self.microsec)
    }
}

impl fmt::Display for DateTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}T{}", self.date, self.time)
    }
}

impl fmt::Display for Duration {
    /// NebulaGraph's `Duration::toString`: the months, then the seconds with nine fraction digits (microseconds
    /// and three zeros), like `P1MT3600.000000000S`: its formula on the fields as they are, so that a duration
    /// whose fields are NebulaGraph's prints as there (`P0MT-1.500000000S` for `{seconds: -1, milliseconds: 500}`,
    /// and `P0MT0.-500000000S` for a negated `{milliseconds: 500}`). `duration()` keeps the microseconds in
    /// 0..10^6, where NebulaGraph keeps a negative millisecond or microsecond field negative.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let seconds = self.seconds as i128 + (self.microseconds / 1_000_000) as i128;
        write!(f, "P{}MT{}.{:0>6}000S", self.months, seconds, self.microseconds % 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_and_durations_out_of_range() {
        let d = Date::new(2020, 1, 31).unwrap();
        assert_eq!(d.add_days(i64::MAX), None);
        assert_eq!(d.add_days(i64::MIN), None);
        assert_eq!(d.add_days(-1).unwrap().to_string(), "2020-01-30");
        let huge = Duration { months: i32::MAX, seconds: i64::MAX, microseconds: 999_999 };
        assert_eq!(d.add_duration(&huge, 1), None);
        assert_eq!(d.add_duration(&huge, -1), None);
        let dt = DateTime { date: d, time: Time::from_micros(0) };
        assert_eq!(dt.add_duration(&huge, -1), None);
        assert_eq!(dt.time.add_duration(&huge, -1).to_string(), "08:29:52.000001");
        // A month keeps the 31st, which rolls into March.
        let month = Duration { months: 1, seconds: 0, microseconds: 0 };
        assert_eq!(d.add_duration(&month, 1).unwrap().to_string(), "2020-03-02");
        assert_eq!(Duration { months: -1, seconds: 90_000, microseconds: 5 }.to_string(), "P-1MT90000.000005000S");
    }

    #[test]
    fn civil_round_trip() {
        for days in [-800_000i64, -1, 0, 1, 18_000, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(Date::parse("2019-02-29"), None);
        assert_eq!(DateTime::parse("1970-01-02T00:00:01").unwrap().to_timestamp(), 86_401);
        assert_eq!(Time::parse("12:30:01.5").unwrap().to_string(), "12:30:01.500000");
    }
}
