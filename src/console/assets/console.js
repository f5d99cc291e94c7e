// The console's progressive enhancement: every page works without it. It asks before destructive
// actions, draws the home page's chart with uPlot, and follows running exports.
(() => {
  // Ask before a destructive action (buttons with data-confirm).
  document.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('button[data-confirm]') : null;
    if (button && !window.confirm(button.getAttribute('data-confirm'))) event.preventDefault();
  });

  // Transfers per hour: the figures are in the page (and in a table for those without the chart).
  const chart = document.getElementById('transfers-chart');
  const data = document.getElementById('transfers-chart-data');
  if (chart && data && window.uPlot) {
    const figures = JSON.parse(data.textContent);
    const colours = ['#0b57a4', '#17613a', '#a3141c'];
    const width = () => Math.max(320, Math.min(chart.clientWidth || 800, 900));
    const plot = new window.uPlot(
      {
        width: width(),
        height: 260,
        scales: { x: { time: true } },
        axes: [{ stroke: '#1b1f24' }, { stroke: '#1b1f24', label: 'transfers' }],
        series: [
          { label: 'Hour (UTC)' },
          ...figures.series.map((s, i) => ({ label: s.label, stroke: colours[i], width: 2 })),
        ],
        tzDate: (ts) => window.uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      },
      [figures.x, ...figures.series.map((s) => s.values)],
      chart,
    );
    window.addEventListener('resize', () => plot.setSize({ width: width(), height: 260 }));
  }

  // Running exports: poll each one's status until it finishes, then offer the download.
  const POLL_INTERVAL_MS = 1000;
  const running = document.querySelectorAll('.progress[data-export]');
  for (const element of running) {
    const status = element.getAttribute('data-status');
    if (status !== 'queued' && status !== 'running') continue;
    const id = element.getAttribute('data-export');
    const poll = async () => {
      const response = await fetch(`/console/exports/${encodeURIComponent(id)}/status`, {
        headers: { accept: 'application/json' },
        credentials: 'same-origin',
      });
      if (!response.ok) return;
      const e = await response.json();
      const bar = element.querySelector('progress');
      if (bar && e.rows_estimated) {
        bar.max = Math.max(e.rows_estimated, 1);
        bar.value = Math.min(e.rows_written, bar.max);
      }
      const rows = element.querySelector('.rows');
      if (rows)
        rows.textContent = `${e.rows_written}${e.rows_estimated ? ` of ${e.rows_estimated}` : ''} rows`;
      const badge = element.querySelector('.badge');
      if (badge) {
        badge.textContent = e.status;
        badge.className = `badge status-${e.status}`;
      }
      if (e.status === 'ready' || e.status === 'failed' || e.status === 'expired') {
        if (bar) bar.remove();
        const cell = document.querySelector(`[data-download="${CSS.escape(id)}"]`);
        if (cell && e.download) {
          const a = document.createElement('a');
          a.href = e.download;
          a.textContent = 'Download';
          a.setAttribute('download', '');
          cell.replaceChildren(a);
        } else if (cell && e.error) {
          cell.textContent = e.error;
        }
        return;
      }
      setTimeout(poll, POLL_INTERVAL_MS);
    };
    setTimeout(poll, POLL_INTERVAL_MS);
  }
})();
