//! Minimal pcap writer: nanosecond timestamps, LINKTYPE_RAW (101, the
//! packet starts with its IP header), little-endian.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

pub const LINKTYPE_RAW: u32 = 101;
pub const MAGIC_NS: u32 = 0xa1b2_3c4d;
pub const SNAPLEN: u32 = 65535;

/// The 24-byte file header.
pub fn file_header() -> [u8; 24] {
    let mut h = [0u8; 24];
    h[0..4].copy_from_slice(&MAGIC_NS.to_le_bytes());
    h[4..6].copy_from_slice(&2u16.to_le_bytes());
    h[6..8].copy_from_slice(&4u16.to_le_bytes());
    // thiszone (4) and sigfigs (4) stay 0
    h[16..20].copy_from_slice(&SNAPLEN.to_le_bytes());
    h[20..24].copy_from_slice(&LINKTYPE_RAW.to_le_bytes());
    h
}

/// The 16-byte record header for a packet of `len` bytes at `ts_ns`
/// (ns since the Unix epoch).
pub fn record_header(ts_ns: u64, len: usize) -> [u8; 16] {
    let incl = len.min(SNAPLEN as usize) as u32;
    let mut h = [0u8; 16];
    h[0..4].copy_from_slice(&((ts_ns / 1_000_000_000) as u32).to_le_bytes());
    h[4..8].copy_from_slice(&((ts_ns % 1_000_000_000) as u32).to_le_bytes());
    h[8..12].copy_from_slice(&incl.to_le_bytes());
    h[12..16].copy_from_slice(&(len as u32).to_le_bytes());
    h
}

pub struct PcapWriter {
    out: BufWriter<File>,
}

impl PcapWriter {
    pub fn create(path: &Path) -> io::Result<PcapWriter> {
        let mut out = BufWriter::with_capacity(1 << 16, File::create(path)?);
        out.write_all(&file_header())?;
        Ok(PcapWriter { out })
    }

    pub fn write_packet(&mut self, ts_ns: u64, pkt: &[u8]) -> io::Result<()> {
        self.out.write_all(&record_header(ts_ns, pkt.len()))?;
        self.out.write_all(&pkt[..pkt.len().min(SNAPLEN as usize)])
    }

    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_header_bytes() {
        assert_eq!(
            file_header(),
            [
                0x4d, 0x3c, 0xb2, 0xa1, // magic, ns resolution, little-endian
                0x02, 0x00, 0x04, 0x00, // version 2.4
                0, 0, 0, 0, // thiszone
                0, 0, 0, 0, // sigfigs
                0xff, 0xff, 0x00, 0x00, // snaplen 65535
                101, 0, 0, 0, // LINKTYPE_RAW
            ]
        );
    }

    #[test]
    fn record_header_bytes() {
        let h = record_header(1_700_000_000_123_456_789, 84);
        assert_eq!(&h[0..4], &1_700_000_000u32.to_le_bytes());
        assert_eq!(&h[4..8], &123_456_789u32.to_le_bytes());
        assert_eq!(&h[8..12], &84u32.to_le_bytes());
        assert_eq!(&h[12..16], &84u32.to_le_bytes());
    }

    #[test]
    fn writes_a_readable_file() {
        let p = std::env::temp_dir().join(format!("linkem-pcap-{}.pcap", std::process::id()));
        let mut w = PcapWriter::create(&p).unwrap();
        w.write_packet(5_000_000_001, &[0x45, 0, 0, 20]).unwrap();
        w.flush().unwrap();
        drop(w);
        let b = std::fs::read(&p).unwrap();
        std::fs::remove_file(&p).unwrap();
        assert_eq!(b.len(), 24 + 16 + 4);
        assert_eq!(&b[24..28], &5u32.to_le_bytes());
        assert_eq!(&b[28..32], &1u32.to_le_bytes());
        assert_eq!(&b[40..44], &[0x45, 0, 0, 20]);
    }
}
