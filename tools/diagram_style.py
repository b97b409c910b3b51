"""What the diagrams share: the sizes' labels, the colours of idle and wasted lanes, cells, saving."""

import matplotlib

matplotlib.use("Agg")
from matplotlib.colors import to_rgb  # noqa: E402
from matplotlib.patches import Rectangle  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402


IDLE = "#f2f2f2"      # a lane with nothing to do
WASTED = "#d9d9d9"    # a lane that computes a value nobody reads
EDGE = "#555555"


# ---- Drawing helpers ---------------------------------------------------------------------------

def cell(ax, x, y, color, text="", w=0.9, h=0.8, fontsize=7, hatch=None, edge=EDGE, textcolor="black"):
    ax.add_patch(Rectangle((x - w / 2, y - h / 2), w, h, facecolor=color, edgecolor=edge,
                           linewidth=0.6, hatch=hatch))
    if text:
        ax.text(x, y, text, ha="center", va="center", fontsize=fontsize, color=textcolor)


def bare(ax):
    ax.set_axis_off()
    ax.set_aspect("equal")


def tint(color, white):
    """color moved a fraction `white` of the way to white."""
    return tuple(c + (1 - c) * white for c in to_rgb(color))


def legend_below(ax, handles, ncol):
    """The key in one band under the drawing, where every diagram keeps it."""
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, 0.0), ncol=ncol, fontsize=9.5,
              frameon=False)


def save(fig, path):
    # No timestamp goes into a PNG; the same matplotlib draws the same bytes.
    fig.savefig(path, dpi=130, bbox_inches="tight", metadata={"Software": None})
    plt.close(fig)


def distinct_hues(count):
    """Hues far apart for owners drawn side by side (blocks, threads, groups, warps)."""
    tab10 = plt.get_cmap("tab10").colors
    return [tab10[i] for i in (0, 1, 2, 4, 9, 6, 8, 5)][:count]


def pow2_text(x):
    """x as 2 with a superscript exponent where it is a power of 2 from 1024 up, else in digits."""
    if x >= 1024 and x & (x - 1) == 0:
        return "2" + str(x.bit_length() - 1).translate(str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹"))
    return f"{x:,}"
