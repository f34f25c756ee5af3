"""Checks a screenshot of the page: boids drawn in the world (pixels of the swarms' colours in
the middle of the window) and the egui panels at both sides (their flat grey background)."""
import sys
from PIL import Image

im = Image.open(sys.argv[1]).convert("RGB")
w, h = im.size
px = im.load()

def near(c, ref, tol=40):
    return all(abs(a - b) <= tol for a, b in zip(c, ref))

# Healthy Normal, Doctor, Antivax, infected (view/render.rs).
boid_colours = [(77, 204, 89), (77, 140, 255), (255, 153, 38), (227, 41, 41)]
boids = sum(
    1
    for x in range(int(w * 0.25), int(w * 0.78), 2)
    for y in range(0, h, 2)
    if any(near(px[x, y], c) for c in boid_colours)
)
def panel(x0, x1):
    greys = sum(
        1
        for x in range(x0, x1, 4)
        for y in range(0, h, 4)
        if (lambda c: max(c) - min(c) < 6 and 20 <= c[0] <= 40)(px[x, y])
    )
    return greys / (((x1 - x0) // 4) * (h // 4))
left, right = panel(0, int(w * 0.18)), panel(int(w * 0.84), w)
print(f"{sys.argv[1]}: {w}x{h}, boid pixels {boids}, panel background left {left:.0%}, right {right:.0%}")
ok = boids > 150 and left > 0.3 and right > 0.3
print("OK: boids drawn, both panels shown" if ok else "FAILED: boids or panels missing")
sys.exit(0 if ok else 1)
