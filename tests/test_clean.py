"""`nox -s clean`: says how much it frees, removes .nox/ and parity's cache, keeps reports/ unless asked, and refuses
a cache dir that is not parity's own."""

from __future__ import annotations

from pathlib import Path

from parity.cli import clean


def tree(tmp_path: Path) -> tuple[Path, Path]:
    repo, cache = tmp_path / "parity", tmp_path / "cache" / "parity"
    for path, size in [(repo / ".nox" / "venv-upstream" / "lib" / "big", 3 << 20), (cache / "ref" / "x.pt", 1 << 20),
                       (repo / "reports" / "interpret" / "results.jsonl", 10), (repo / "reports" / "README.md", 5)]:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
    return repo, cache


def test_clean_says_what_it_frees_and_keeps_reports_unless_asked(tmp_path, monkeypatch, capsys):
    repo, cache = tree(tmp_path)
    monkeypatch.setenv("PARITY_CACHE_DIR", str(cache))
    assert clean.main(["--dry-run"], repo=repo) == 0
    assert "would free 4.0 MiB" in capsys.readouterr().out and (repo / ".nox").exists()  # a dry run removes nothing
    assert clean.main([], repo=repo) == 0
    out = capsys.readouterr().out
    assert "freed 4.0 MiB" in out and "reports/ kept" in out
    assert not (repo / ".nox").exists() and not cache.exists()
    assert (repo / "reports" / "interpret" / "results.jsonl").exists()
    assert clean.main(["--reports"], repo=repo) == 0
    assert [p.name for p in (repo / "reports").iterdir()] == ["README.md"]  # tracked, kept
    assert clean.main([], repo=repo) == 0 and "nothing to remove" in capsys.readouterr().out


def test_a_cache_dir_that_is_not_parity_own_is_refused(tmp_path, monkeypatch, capsys):
    repo, _ = tree(tmp_path)
    monkeypatch.setenv("PARITY_CACHE_DIR", str(tmp_path))  # above the clone: removing it would take the clone
    assert clean.main([], repo=repo) == 2
    assert "refusing" in capsys.readouterr().err and (repo / ".nox").exists()
    monkeypatch.setenv("PARITY_CACHE_DIR", str(Path.home()))
    assert clean.main([], repo=repo) == 2
