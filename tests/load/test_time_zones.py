"""is_time_zone answers as zoneinfo.available_timezones() does, name by name."""

from __future__ import annotations

from zoneinfo import available_timezones

from econ.load.time_zones import is_time_zone


def test_every_zone_and_no_other_name_is_a_time_zone():
    zones = available_timezones()
    assert zones, "this machine has no time zone data"
    assert all(is_time_zone(zone) for zone in zones)
    others = ["", "UTC/", "/UTC", "utc", "Europe", "Europe/", "Europe//Paris", "Europe/../UTC", "./UTC", "posixrules",
              "right/UTC", "posix/UTC", "zone.tab", "zone1970.tab", "tzdata.zi", "leapseconds", "iso3166.tab",
              "Europe/Paris/x", "Not/AZone", "UTC\x00", "America/Argentina", "Etc"]  # fmt: skip
    assert [name for name in others if is_time_zone(name) != (name in zones)] == []
