"""A bar chart as a standalone SVG file, for docs/benchmarks.md (no plotting library needed).

    bar_chart("docs/img/x.svg", ["blur", "mlp"], [1.8, 0.6], title="speedup", reference=1.0, unit="×")

draws one bar per label, its value written above it, and a dashed line at `reference`: bars
on the good side of it blue, the others red (`lower_is_better` for a time or a cost).
"""
from xml.sax.saxutils import escape


def bar_chart(path, labels, values, title="", reference=None, unit="", lower_is_better=False):
    width, height, left, bottom, top = 120 + 90 * len(labels), 360, 60, 60, 50
    plot_h = height - top - bottom
    vmax = max(list(values) + ([reference] if reference else [])) * 1.15 or 1.0

    def y(v):
        return top + plot_h * (1 - v / vmax)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
             f'font-size="12">', f'<rect width="{width}" height="{height}" fill="white"/>',
             f'<text x="{width / 2}" y="24" text-anchor="middle" font-size="14">{escape(title)}</text>',
             f'<line x1="{left}" y1="{top + plot_h}" x2="{width - 20}" y2="{top + plot_h}" stroke="black"/>',
             f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="black"/>']
    for i in range(5):
        v = vmax * i / 4
        parts.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end">{v:.2g}</text>')
    for i, (label, v) in enumerate(zip(labels, values)):
        x = left + 30 + 90 * i
        good = reference is None or (v <= reference if lower_is_better else v >= reference)
        color = "#2b7bba" if good else "#d9534f"
        parts.append(f'<rect x="{x}" y="{y(v):.1f}" width="50" height="{top + plot_h - y(v):.1f}" fill="{color}"/>')
        parts.append(f'<text x="{x + 25}" y="{y(v) - 5:.1f}" text-anchor="middle">{v:.2f}{escape(unit)}</text>')
        parts.append(f'<text x="{x + 25}" y="{top + plot_h + 18}" text-anchor="middle">{escape(label)}</text>')
    if reference is not None:
        parts.append(f'<line x1="{left}" y1="{y(reference):.1f}" x2="{width - 20}" y2="{y(reference):.1f}" '
                     f'stroke="gray" stroke-dasharray="6,4"/>')
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")
