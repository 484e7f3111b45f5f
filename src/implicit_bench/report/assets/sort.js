// Sortable report tables (class "sortable"): click a header to sort by that column, again to
// reverse. Cells carry their sort key in data-sort (a number, else text); blanks sort last.
(function () {
  function key(cell) {
    const raw = cell ? cell.getAttribute('data-sort') : '';
    if (raw === null || raw === '') return null;
    const num = Number(raw);
    return Number.isNaN(num) ? raw : num;
  }
  function sortBy(table, col, th) {
    const body = table.tBodies[0];
    const asc = th.getAttribute('data-dir') !== 'asc';
    table.querySelectorAll('th[data-dir]').forEach(h => h.removeAttribute('data-dir'));
    th.setAttribute('data-dir', asc ? 'asc' : 'desc');
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = key(a.cells[col]), y = key(b.cells[col]);
      if (x === null) return y === null ? 0 : 1;
      if (y === null) return -1;
      const c = (typeof x === 'number' && typeof y === 'number') ? x - y : String(x).localeCompare(String(y));
      return asc ? c : -c;
    });
    rows.forEach(r => body.appendChild(r));
  }
  document.querySelectorAll('table.sortable').forEach(table => {
    const head = table.tHead ? table.tHead.rows[0] : null;
    if (!head) return;
    Array.from(head.cells).forEach((th, col) => {
      th.classList.add('sort');
      th.title = 'sort';
      th.addEventListener('click', () => sortBy(table, col, th));
    });
  });
})();
