"""Work around a refused bundle: re-pad the safetensors headers that parity's pickle check mistakes for a pickle.

A safetensors file starts with its JSON header's length as 8 little-endian bytes. When that length is 0x280,
0x380, 0x480 or 0x580 (mod 65536), the first two bytes are b"\\x80\\x02".."\\x80\\x05", a pickle's protocol
magic, and parity.record.bundle.refuse_foreign_files refuses the whole bundle (found on FlagGems' recording,
2026-12-06, issue 51). This rewrites each such file with 8 more bytes of header padding (spaces after the JSON,
as the safetensors format allows; the tensors' bytes and their `tensor_sha256` are unchanged) and puts the new
file's sha256 in the manifest lines that named the old one. Prints what it changed.

    python bench/bundle_repad.py BUNDLE
"""

from __future__ import annotations

import hashlib
import struct
import sys
from pathlib import Path

PICKLE_MAGIC = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")


def repad(data: bytes) -> bytes:
    (n,) = struct.unpack("<Q", data[:8])
    header = data[8:8 + n]
    return struct.pack("<Q", n + 8) + header + b" " * 8 + data[8 + n:]


def main(bundle: Path) -> int:
    renamed: dict[str, str] = {}
    for path in sorted((bundle / "tensors").glob("*.safetensors")):
        data = path.read_bytes()
        if data[:2] not in PICKLE_MAGIC:
            continue
        new = repad(data)
        renamed[hashlib.sha256(data).hexdigest()] = hashlib.sha256(new).hexdigest()
        path.write_bytes(new)
        before, after = struct.unpack("<Q", data[:8])[0], struct.unpack("<Q", new[:8])[0]
        print(f"re-padded {path.name}: header {before} -> {after} bytes")
    for manifest in sorted(bundle.glob("manifest-*.jsonl")):
        text = manifest.read_text(encoding="utf-8")
        changed = text
        for old, new_sha in renamed.items():
            changed = changed.replace(f'"sha256": "{old}"', f'"sha256": "{new_sha}"')
        if changed != text:
            manifest.write_text(changed, encoding="utf-8")
    print(f"{len(renamed)} tensor file(s) re-padded in {bundle}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
