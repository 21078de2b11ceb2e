# nbody.py - the classic n-body simulation of five planets (floats, lists,
# tight loops); bench/cpython/run.sh times it.  nbody.py [STEPS]
#
# SPDX-License-Identifier: MIT
import sys

PI = 3.14159265358979323
DAYS = 365.24
MASS = 4 * PI * PI


def bodies():
    # x, y, z, vx, vy, vz, mass: the sun and the four giant planets
    planets = [
        [4.84143144246472090e+00, -1.16032004402742839e+00, -1.03622044471123109e-01,
         1.66007664274403694e-03, 7.69901118419740425e-03, -6.90460016972063023e-05,
         9.54791938424326609e-04],
        [8.34336671824457987e+00, 4.12479856412430479e+00, -4.03523417114321381e-01,
         -2.76742510726862411e-03, 4.99852801234917238e-03, 2.30417297573763929e-05,
         2.85885980666130812e-04],
        [1.28943695621391310e+01, -1.51111514016986312e+01, -2.23307578892655734e-01,
         2.96460137564761618e-03, 2.37847173959480950e-03, -2.96589568540237556e-05,
         4.36624404335156298e-05],
        [1.53796971148509165e+01, -2.59193146099879641e+01, 1.79258772950371181e-01,
         2.68067772490389322e-03, 1.62824170038242295e-03, -9.51592254519715870e-05,
         5.15138902046611451e-05],
    ]
    out = [[0.0, 0.0, 0.0, 0.0, 0.0, 0.0, MASS]]
    for p in planets:
        out.append([p[0], p[1], p[2], p[3] * DAYS, p[4] * DAYS, p[5] * DAYS, p[6] * MASS])
    px = sum(b[3] * b[6] for b in out)
    py = sum(b[4] * b[6] for b in out)
    pz = sum(b[5] * b[6] for b in out)
    out[0][3], out[0][4], out[0][5] = -px / MASS, -py / MASS, -pz / MASS
    return out


def energy(bs):
    e = 0.0
    for i, a in enumerate(bs):
        e += 0.5 * a[6] * (a[3] * a[3] + a[4] * a[4] + a[5] * a[5])
        for b in bs[i + 1:]:
            dx, dy, dz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
            e -= a[6] * b[6] / (dx * dx + dy * dy + dz * dz) ** 0.5
    return e


def advance(bs, steps, dt=0.01):
    pairs = [(bs[i], bs[j]) for i in range(len(bs)) for j in range(i + 1, len(bs))]
    for _ in range(steps):
        for a, b in pairs:
            dx, dy, dz = a[0] - b[0], a[1] - b[1], a[2] - b[2]
            d2 = dx * dx + dy * dy + dz * dz
            mag = dt / (d2 * d2 ** 0.5)
            ma, mb = a[6] * mag, b[6] * mag
            a[3] -= dx * mb
            a[4] -= dy * mb
            a[5] -= dz * mb
            b[3] += dx * ma
            b[4] += dy * ma
            b[5] += dz * ma
        for b in bs:
            b[0] += dt * b[3]
            b[1] += dt * b[4]
            b[2] += dt * b[5]


if __name__ == "__main__":
    bs = bodies()
    before = energy(bs)
    advance(bs, int(sys.argv[1]) if len(sys.argv) > 1 else 150000)
    print(f"{before:.9f} {energy(bs):.9f}")
