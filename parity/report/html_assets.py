"""The inline style and script of reports/index.html: plain CSS and a small vanilla script, nothing fetched.

The script does two things: a click (or Enter) on a header of a `table.sortable` sorts its rows by that column
(again: the other way; numbers as numbers), and the `select[data-filter]` controls hide the rows whose
`data-<name>` attribute differs from the chosen value. `#shown` says how many rows are left; a link to a
finding (`#finding-N`) opens it.
"""

from __future__ import annotations

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:1.5em auto;max-width:1400px;padding:0 1em;color:#1b1f24}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #d0d7de}
table{border-collapse:collapse;width:100%;margin:.6em 0}
th,td{border:1px solid #d0d7de;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f6f8fa;cursor:pointer;user-select:none;white-space:nowrap}
th[aria-sort=ascending]::after{content:" \\25B2"}th[aria-sort=descending]::after{content:" \\25BC"}
tr.st-fail td{background:#ffebe9}tr.st-known td{background:#fff8c5}tr.st-pass td{background:#f0fff4}
tr.st-not-checked td{color:#57606a}
.filters{display:flex;gap:1em;flex-wrap:wrap;margin:.5em 0}.filters select{margin-left:.3em}
details{border:1px solid #d0d7de;border-radius:4px;margin:.4em 0;padding:.3em .6em}
summary{cursor:pointer}pre{background:#f6f8fa;padding:.6em;overflow:auto;white-space:pre-wrap;max-height:30em}
code{background:#f6f8fa;padding:0 .2em}dt{font-weight:600;margin-top:.4em}dd{margin-left:1.2em}
img{max-width:100%}.note{color:#57606a}
"""

SCRIPT = """
(function(){
  function key(td){
    var t=(td?td.textContent:'').trim(), n=parseFloat(t);
    return (t!=='' && isFinite(n) && /^-?[0-9.]/.test(t)) ? [0,n,''] : [1,0,t.toLowerCase()];
  }
  function cmp(a,b){ return a[0]-b[0] || a[1]-b[1] || (a[2]<b[2]?-1:a[2]>b[2]?1:0); }
  function sortBy(th){
    var table=th.closest('table'), body=table.tBodies[0], col=+th.dataset.col;
    var dir=th.getAttribute('aria-sort')==='ascending' ? -1 : 1;
    table.querySelectorAll('th').forEach(function(h){ h.removeAttribute('aria-sort'); });
    th.setAttribute('aria-sort', dir===1 ? 'ascending' : 'descending');
    var rows=Array.prototype.slice.call(body.rows).map(function(r,i){ return [key(r.cells[col]),i,r]; });
    rows.sort(function(a,b){ return dir*cmp(a[0],b[0]) || a[1]-b[1]; });
    rows.forEach(function(x){ body.appendChild(x[2]); });
  }
  document.querySelectorAll('table.sortable th').forEach(function(th){
    th.addEventListener('click', function(){ sortBy(th); });
    th.addEventListener('keydown', function(e){ if(e.key==='Enter'){ sortBy(th); } });
  });
  var selects=document.querySelectorAll('select[data-filter]');
  function applyFilters(){
    var rows=document.querySelectorAll('table.filterable tbody tr'), shown=0;
    rows.forEach(function(r){
      var ok=true;
      selects.forEach(function(s){ if(s.value && r.getAttribute('data-'+s.dataset.filter)!==s.value){ ok=false; } });
      r.hidden=!ok; if(ok){ shown++; }
    });
    var out=document.getElementById('shown');
    if(out){ out.textContent=shown+' of '+rows.length+' rows shown'; }
  }
  selects.forEach(function(s){ s.addEventListener('change', applyFilters); });
  applyFilters();
  function openTarget(){
    var d=location.hash && document.getElementById(location.hash.slice(1));
    if(d && d.tagName==='DETAILS'){ d.open=true; }
  }
  window.addEventListener('hashchange', openTarget);
  openTarget();
})();
"""
