"""Direct labels: each series named beside its line, placed where it covers no other line or label."""

import math

from tools.schema import CUB_CHAPTER, is_baseline


# Direct labels: a series is named by text beside it, not by a legend. A line's label sits right
# of its last point (end_labels: labels that would overlap stack in the order of their points);
# a point's label sits at the first of a list of candidate offsets around it where it covers no
# other label, marker, text or legend, nor a series' line (place_labels). One moved off its
# anchor gets a thin leader line back to it. DIRECT_LABEL is the gid the tests find them by.
DIRECT_LABEL = "direct_label"
LABEL_BOX = dict(boxstyle="square,pad=0.15", facecolor="white", edgecolor="none", alpha=0.85)


def ring_candidates(radii=(5, 11, 18, 26, 36, 48, 62, 78, 96, 116, 138),
                    angles=(0, -25, 25, -50, 50, 180, -155, 155, -90, 90, -130, 130)):
    """Around a point: right first, then the other sides, further out ring by ring."""
    out = []
    for r in radii:
        for a in angles:
            dx, dy = r * math.cos(math.radians(a)), r * math.sin(math.radians(a))
            ha = "left" if dx > 0.3 * r else "right" if dx < -0.3 * r else "center"
            out.append((dx, dy, ha))
    return out


def label_obstacles(ax, renderer, avoid_lines):
    """What a label must not cover, in display pixels: boxes (markers, texts, the legend) and
    points sampled every few pixels along the lines."""
    import numpy as np
    from matplotlib.collections import PathCollection
    px = ax.figure.dpi / 72
    boxes, points = [], []
    for line in ax.get_lines():
        if not line.get_visible():
            continue
        xy = line.get_transform().transform(np.asarray(line.get_xydata(), dtype=float))
        xy = xy[np.isfinite(xy).all(axis=1)]
        if line.get_marker() not in (None, "", " ", "None", "none"):
            r = line.get_markersize() * px / 2 + 1
            boxes += [(x - r, y - r, x + r, y + r) for x, y in xy]
        if (avoid_lines and not line.get_label().startswith("_") and len(xy) > 1
                and line.get_linestyle() not in ("None", "", " ", "none")):
            for a, b in zip(xy[:-1], xy[1:]):
                steps = max(1, int(np.hypot(*(b - a)) / 3))
                points.append(a + (b - a) * np.linspace(0, 1, steps + 1)[:, None])
    for coll in ax.collections:
        if isinstance(coll, PathCollection) and len(coll.get_offsets()):  # a scatter's points
            xy = coll.get_offset_transform().transform(coll.get_offsets())
            r = math.sqrt(max(coll.get_sizes())) * px / 2 + 1
            boxes += [(x - r, y - r, x + r, y + r) for x, y in xy]
    boxes += [tuple(t.get_window_extent(renderer).extents) for t in ax.texts]
    if ax.get_legend():
        boxes.append(tuple(ax.get_legend().get_window_extent(renderer).extents))
    return (np.array(boxes, dtype=float).reshape(-1, 4),
            np.concatenate(points) if points else np.zeros((0, 2)))


def _overlap(box, boxes):
    """The area box shares with each of boxes (an (n, 4) array of x0, y0, x1, y1), summed."""
    import numpy as np
    if not len(boxes):
        return 0.0
    w = np.minimum(box[2], boxes[:, 2]) - np.maximum(box[0], boxes[:, 0])
    h = np.minimum(box[3], boxes[:, 3]) - np.maximum(box[1], boxes[:, 1])
    return float((np.clip(w, 0, None) * np.clip(h, 0, None)).sum())


def label_cost(box, boxes, points, taken):
    """How much a label's box (display pixels) covers: labels placed before (taken) weigh most,
    then markers and texts (boxes), then the points sampled along the lines."""
    import numpy as np
    cost = 50 * _overlap(box, np.array(taken, dtype=float).reshape(-1, 4)) + 10 * _overlap(box, boxes)
    if len(points):
        cost += 20 * int(((points[:, 0] > box[0]) & (points[:, 0] < box[2])
                          & (points[:, 1] > box[1]) & (points[:, 1] < box[3])).sum())
    return cost


def text_size(fig, renderer, text, fontsize, pad):
    """The box a label of text at fontsize takes, pad pixels around it: (width, height) in pixels."""
    probe = fig.text(0, 0, text, fontsize=fontsize)
    extent = probe.get_window_extent(renderer)
    probe.remove()
    return extent.width + 2 * pad, extent.height + 2 * pad


def _leader_points(box, anchor):
    """Points every 3 pixels along a leader, from the box's center (where matplotlib starts it) to
    the anchor, those outside the box."""
    import numpy as np
    center = np.array([(box[0] + box[2]) / 2, (box[1] + box[3]) / 2])
    steps = max(2, int(np.hypot(*(anchor - center)) / 3))
    line = center + (anchor - center) * np.linspace(0, 1, steps)[:, None]
    return line[~((line[:, 0] >= box[0]) & (line[:, 0] <= box[2])
                  & (line[:, 1] >= box[1]) & (line[:, 1] <= box[3]))]


def _candidate_cost(box, size, anchor, far, obstacles, taken, frame):
    """What a label's box (of size (width, height)) at one candidate place covers (label_cost),
    plus its leader line's crossings of labels and markers where it is far from its anchor, plus
    its area outside the axes where frame (the axes' extents) is given. obstacles: (boxes, points)
    as label_cost's."""
    boxes, points = obstacles
    cost = label_cost(box, boxes, points, taken)
    if far:  # its leader: across no label or marker
        line = _leader_points(box, anchor)[:-2]
        for other in taken + [tuple(b) for b in boxes]:
            cost += 20 * int(((line[:, 0] > other[0]) & (line[:, 0] < other[2])
                              & (line[:, 1] > other[1]) & (line[:, 1] < other[3])).sum())
    if frame is not None:
        w, h = size
        clipped = (max(box[0], frame[0]), max(box[1], frame[1]),
                   min(box[2], frame[2]), min(box[3], frame[3]))
        outside = w * h - max(0, clipped[2] - clipped[0]) * max(0, clipped[3] - clipped[1])
        cost += 50 * outside if outside > 0.5 else 0  # not a rounding error's sliver
    return cost


def place_labels(ax, items, candidates, inside=True, avoid_lines=True, taken=None,
                  fontsize=8.5, leader=9, arrowstyle="-"):
    """Direct labels, items [(x, y, text, color)] in data coordinates, placed in that order, each
    at the first candidate (dx, dy, ha), offsets in points, that overlaps nothing (else the least
    overlapping); a label off its anchor gets a leader line, which crosses no label or marker
    where a place allows. inside: the labels stay within the axes; avoid_lines: nor do they cross
    a series' line (a labelled one: roofs and floors are labelled on themselves). taken: boxes
    (display pixels) of labels placed before, in this axes or another one of the figure; the
    new ones are appended."""
    import numpy as np
    if not items:
        return []
    fig, renderer, px = laid_out(ax)
    boxes, points = label_obstacles(ax, renderer, avoid_lines)
    taken = [] if taken is None else taken
    frame = ax.get_window_extent(renderer).extents if inside else None
    pad = 0.15 * fontsize * px
    placed = []
    leaders = np.zeros((0, 2))  # points along the leader lines drawn so far
    for x, y, text, color in items:
        w, h = text_size(fig, renderer, text, fontsize, pad)
        anchor = np.array(ax.transData.transform((x, y)))
        best = None
        for dx, dy, ha in candidates:
            cx, cy = anchor[0] + dx * px, anchor[1] + dy * px
            x0 = cx - pad if ha == "left" else cx - w + pad if ha == "right" else cx - w / 2
            box = (x0, cy - h / 2, x0 + w, cy + h / 2)
            cost = _candidate_cost(box, (w, h), anchor, math.hypot(dx, dy) > leader,
                                   (boxes, np.concatenate([points, leaders])), taken, frame)
            if best is None or cost < best[0]:
                best = (cost, dx, dy, ha, box)
            if cost < 0.5:
                break
        _, dx, dy, ha, box = best
        far = math.hypot(dx, dy) > leader
        placed.append(ax.annotate(text, (x, y), xytext=(dx, dy), textcoords="offset points", ha=ha,
                                  va="center", fontsize=fontsize, color=color, bbox=LABEL_BOX,
                                  annotation_clip=False, zorder=6, gid=DIRECT_LABEL,
                                  arrowprops=dict(arrowstyle=arrowstyle, color=color, linewidth=0.7,
                                                  shrinkA=0, shrinkB=3) if far else None))
        taken.append(box)
        if far:
            leaders = np.concatenate([leaders, _leader_points(box, anchor)])
    return placed


def laid_out(ax):
    """ax's figure as a draw would lay it out, without drawing it: every axes' limits brought up
    to date (matplotlib autoscales them lazily, at the next draw), so that data lands where it will
    be drawn. The figure, the renderer that sizes text, and pixels a point."""
    fig = ax.figure
    for each in fig.axes:
        each.get_xlim()  # reading the limits applies any autoscaling still pending, x and y
    return fig, fig.canvas.get_renderer(), fig.dpi / 72


# end_labels' offsets right of a line's end, in points: a label level with its point, a stacked one.
NEAR, FAR = 6, 16


def _columns(spans):
    """The labels whose x spans (left, right) overlap, directly or through others: each label's
    column (the index of one of them); each column stacks on its own."""
    column = list(range(len(spans)))
    for i in range(len(spans)):
        for j in range(i):
            if spans[i][0] < spans[j][1] and spans[j][0] < spans[i][1]:
                old, new = column[i], column[j]
                column = [new if c == old else c for c in column]
    return column


def _stacked(column, anchors, heights, frame, gap, px):
    """Each column's labels in clusters: those whose boxes would overlap stack upward in the order
    of their points, as near them as fits, within 20 points of the axes (frame: their extents).
    Returns each label's center y, whether its cluster holds it alone, and its cluster (the index
    of its first label)."""
    centers = [a[1] for a in anchors]
    alone = [True] * len(anchors)
    cluster_of = list(range(len(anchors)))

    def stack(cluster):
        """A cluster's label centers, stacked upward in its order, as near their points as fits."""
        rel, top = [], 0.0
        for i in cluster:
            rel.append(top + heights[i] / 2)
            top += heights[i] + gap
        total = top - gap
        bottom = sum(anchors[i][1] - r for i, r in zip(cluster, rel)) / len(cluster)
        bottom = min(max(bottom, frame[1] - 20 * px), frame[3] + 20 * px - total)
        return [bottom + r for r in rel], bottom, bottom + total

    for c in set(column):
        clusters = []
        for i in sorted((i for i in range(len(anchors)) if column[i] == c), key=lambda i: anchors[i][1]):
            clusters.append([i])
            while len(clusters) > 1 and stack(clusters[-2])[2] + gap > stack(clusters[-1])[1]:
                clusters[-2:] = [clusters[-2] + clusters[-1]]
        for cluster in clusters:
            for i, y in zip(cluster, stack(cluster)[0]):
                centers[i] = y
                alone[i] = len(cluster) == 1
                cluster_of[i] = cluster[0]
    return centers, alone, cluster_of


def _clear_of_lines(obstacles, anchors, sizes, centers, alone, px, pad):
    """A label not stacked with another that crosses a series' line or marker where it sits moves
    up or down, the least it must, clear of the other labels (it gets a leader line): centers,
    changed in place. obstacles: label_obstacles' (boxes, points)."""
    boxes, points = obstacles

    def box(i, center, dx):
        x0 = anchors[i][0] + dx * px - pad
        return (x0, center - sizes[i][1] / 2, x0 + sizes[i][0], center + sizes[i][1] / 2)
    for i in range(len(anchors)):
        others = [box(j, centers[j], FAR) for j in range(len(anchors)) if j != i]
        if not alone[i] or label_cost(box(i, centers[i], NEAR), boxes, points, others) == 0:
            continue
        for step in range(1, 9):
            found = [y for y in (anchors[i][1] - step * sizes[i][1] / 2,
                                 anchors[i][1] + step * sizes[i][1] / 2)
                     if label_cost(box(i, y, FAR), boxes, points, others) == 0]
            if found:
                centers[i] = found[0]
                break


def end_labels(ax, items, fontsize=8.5, gap=1.0):
    """Direct labels at the ends of lines, items [(x, y, text, color)] in data coordinates: each
    right of its line's last point, level with it where it overlaps no other label. Labels that
    would overlap stack in the order of their points, as close to them as they fit, each with a
    leader line back to its point, so that no two leaders cross; a stack stays beside its axes."""
    if not items:
        return []
    fig, renderer, px = laid_out(ax)
    pad = 0.15 * fontsize * px
    sizes = [text_size(fig, renderer, text, fontsize, pad) for _, _, text, _ in items]
    anchors = [ax.transData.transform((x, y)) for x, y, _, _ in items]
    column = _columns([(a[0] + NEAR * px - pad, a[0] + FAR * px + w) for a, (w, _) in zip(anchors, sizes)])
    centers, alone, cluster_of = _stacked(column, anchors, [h for _, h in sizes],
                                          ax.get_window_extent(renderer).extents, gap, px)
    _clear_of_lines(label_obstacles(ax, renderer, True), anchors, sizes, centers, alone, px, pad)
    labels = []
    shifted = [abs(centers[i] - anchors[i][1]) > 1.5 for i in range(len(items))]
    for c in set(cluster_of):
        members = [i for i in range(len(items)) if cluster_of[i] == c]
        moved = any(shifted[i] for i in members)  # a stack's labels line up, all with leaders
        for i in members:
            x, y, text, color = items[i]
            labels.append(ax.annotate(
                text, (x, y), xytext=(FAR if moved else NEAR, (centers[i] - anchors[i][1]) / px),
                textcoords="offset points", ha="left", va="center", fontsize=fontsize,
                color=color, bbox=LABEL_BOX, annotation_clip=False, zorder=6, gid=DIRECT_LABEL,
                arrowprops=dict(arrowstyle="-", color=color, linewidth=0.7, shrinkA=0, shrinkB=3)
                if shifted[i] or moved else None))
    return labels


def direct_labels(ax):
    """The direct labels of a panel (the tests read them)."""
    return [t for t in ax.texts if t.get_gid() == DIRECT_LABEL]


def chapter_numbers(chapters):
    """['05_coarsened', '06_warp_shuffle', '07_two_pass', '10_single_pass'] -> '05–07 and 10':
    the chapters' numbers, three or more in a row as a range."""
    numbers = [c.split("_", 1)[0] for c in chapters]
    runs = []
    for n in numbers:
        if runs and n.isdigit() and runs[-1][-1].isdigit() and int(n) == int(runs[-1][-1]) + 1:
            runs[-1].append(n)
        else:
            runs.append([n])
    parts = [f"{r[0]}–{r[-1]}" if len(r) >= 3 else ", ".join(r) for r in runs]
    text = ", ".join(parts)
    if ", " in text:
        head, _, tail = text.rpartition(", ")
        text = f"{head} and {tail}"
    return text


def group_names(chapters):
    """Chapters as a title names them, in chapter order: the lessons by number
    (chapter_numbers), the library's chapter as CUB, last."""
    lessons = sorted(c for c in chapters if c != CUB_CHAPTER)
    names = [chapter_numbers(lessons)] if lessons else []
    names += ["CUB"] if CUB_CHAPTER in chapters else []
    text = " and ".join(names) if len(names) < 2 or " and " not in names[0] else \
        names[0].replace(" and ", ", ") + " and CUB"
    return ("chapter " if len(lessons) == 1 else "chapters " if lessons else "") + text


def short_label(chapter, kernel):
    """A direct label: a lesson by its chapter, a library call by its name."""
    return f"{kernel} (baseline)" if is_baseline(kernel) else chapter
