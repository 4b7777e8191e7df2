//! Which addresses are of the private network. The component refuses a webhook URL that
//! names one as written; the host refuses to connect to a name that resolves to one. One
//! rule for both, so that what is refused at create time and at delivery time agree.

#![no_std]

use core::net::{IpAddr, Ipv4Addr};

/// Whether an address is of the private network: loopback, private, link-local,
/// unique-local, multicast, unspecified, and the like (shared, broadcast, reserved, and
/// IPv4 addresses inside IPv6 ones).
pub fn is_private(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_multicast()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || a == 0
                // Shared address space (carrier-grade NAT), 100.64.0.0/10.
                || (a == 100 && (64..128).contains(&b))
                // Reserved, 240.0.0.0/4.
                || a >= 240
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_private(IpAddr::V4(v4));
            }
            let s = v6.segments();
            // NAT64 (64:ff9b::/96) reaches the IPv4 address in its last 32 bits.
            if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
                let v4 = Ipv4Addr::from((u32::from(s[6]) << 16) | u32::from(s[7]));
                return is_private(IpAddr::V4(v4));
            }
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                // Unique local, fc00::/7.
                || (s[0] & 0xfe00) == 0xfc00
                // Link-local, fe80::/10, and the old site-local, fec0::/10.
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] & 0xffc0) == 0xfec0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_of_the_private_network_are_told_apart() {
        for private in [
            "127.0.0.1",
            "127.8.9.10",
            "10.0.0.1",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "0.1.2.3",
            "100.64.0.1",
            "224.0.0.251",
            "255.255.255.255",
            "::1",
            "::",
            "fd12:3456::1",
            "fe80::1",
            "ff02::1",
            "::ffff:10.1.2.3",
            "::ffff:169.254.169.254",
            "64:ff9b::7f00:1",
        ] {
            assert!(is_private(private.parse().unwrap()), "{private}");
        }
        for public in [
            "93.184.216.34",
            "172.32.0.1",
            "100.128.0.1",
            "2606:4700:4700::1111",
            "::ffff:93.184.216.34",
            "64:ff9b::5db8:d822",
        ] {
            assert!(!is_private(public.parse().unwrap()), "{public}");
        }
    }
}
