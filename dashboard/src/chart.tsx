import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartDataset,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';

// Only the pieces the dashboard draws, so the bundle carries no unused chart types.
Chart.register(
  BarController,
  BarElement,
  LineController,
  LineElement,
  PointElement,
  CategoryScale,
  LinearScale,
  Tooltip,
  Legend,
);

export const PALETTE = ['#2563eb', '#f59e0b', '#10b981', '#ef4444', '#8b5cf6', '#0ea5e9', '#64748b'];

export interface ChartProps {
  /** Names the chart for tests and for readers of the page source. */
  id: string;
  title: string;
  labels: string[];
  datasets: ChartDataset<'bar' | 'line', (number | null)[]>[];
  horizontal?: boolean;
  /** Format of the value axis and tooltips. */
  format?: (value: number) => string;
  /** A second value axis on the right, for datasets with `yAxisID: 'y2'`. */
  secondAxisFormat?: (value: number) => string;
}

/** A Chart.js chart whose data are also on its element (`data-points`, `data-sum`), for tests. */
export function ChartView(props: ChartProps) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const { id, labels, datasets, horizontal, format, secondAxisFormat } = props;

  useEffect(() => {
    if (!canvas.current) return;
    const valueAxis = horizontal ? 'x' : 'y';
    const tick = (f?: (v: number) => string) => ({
      callback: (v: string | number) => (f ? f(Number(v)) : v),
    });
    const chart = new Chart(canvas.current, {
      type: 'bar',
      data: { labels, datasets },
      options: {
        indexAxis: horizontal ? 'y' : 'x',
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        plugins: {
          legend: { display: datasets.length > 1, position: 'bottom' },
          tooltip: {
            callbacks: {
              label: (ctx) => {
                const f = ctx.dataset.yAxisID === 'y2' ? secondAxisFormat : format;
                const v = Number(horizontal ? ctx.parsed.x : ctx.parsed.y);
                return `${ctx.dataset.label ?? ''}: ${f ? f(v) : v}`;
              },
            },
          },
        },
        scales: {
          [valueAxis]: { beginAtZero: true, ticks: tick(format) },
          ...(secondAxisFormat
            ? {
                y2: {
                  position: 'right',
                  beginAtZero: true,
                  grid: { drawOnChartArea: false },
                  ticks: tick(secondAxisFormat),
                },
              }
            : {}),
        },
      },
    });
    return () => chart.destroy();
  }, [labels, datasets, horizontal, format, secondAxisFormat]);

  const first = datasets[0]?.data ?? [];
  const sum = first.reduce<number>((s, v) => s + (v ?? 0), 0);
  return (
    <figure class="chart" data-chart={id} data-points={labels.length} data-sum={sum}>
      <figcaption>{props.title}</figcaption>
      {labels.length === 0 ? (
        <p class="empty">No data in this range.</p>
      ) : (
        <div
          class="chart-body"
          style={{ height: `${horizontal ? Math.max(160, labels.length * 28 + 60) : 260}px` }}
        >
          <canvas ref={canvas} />
        </div>
      )}
    </figure>
  );
}
