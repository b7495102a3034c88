"""Random ops: Kiln's Philox4x32-10 draws, checked bit for bit against a
reference written from the algorithm (itself checked against the published
known answers), and the ops built on them against their definitions.

A compiled graph with random ops takes a seed after its inputs and constants
(kiln.rng.draw_seed); these tests pass their own to the artifact to know what
it must draw, and call the compiled function to see that calls differ.
"""

import math

import pytest

torch = pytest.importorskip("torch")

import kiln  # noqa: E402
from kiln.rng import RANDOM_OPS, seeded  # noqa: E402
from e2e_support import DEVICES, poisoned_like  # noqa: E402

MASK32 = 0xFFFFFFFF


def philox(counter, key):
    """Philox4x32-10 (Salmon et al., SC'11): four words for a 128-bit counter
    and a 64-bit key, as lists of 32-bit words."""
    counter, key = list(counter), list(key)
    for round_ in range(10):
        if round_:
            key = [(key[0] + 0x9E3779B9) & MASK32, (key[1] + 0xBB67AE85) & MASK32]
        product0, product1 = 0xD2511F53 * counter[0], 0xCD9E8D57 * counter[2]
        counter = [((product1 >> 32) ^ counter[1] ^ key[0]) & MASK32, product1 & MASK32,
                   ((product0 >> 32) ^ counter[3] ^ key[1]) & MASK32, product0 & MASK32]
    return counter


def kiln_words(seed, offset, index):
    """What Kiln draws for element `index` of the op in stream `offset`."""
    seed &= (1 << 64) - 1
    return philox([index & MASK32, index >> 32, offset & MASK32, offset >> 32],
                  [seed & MASK32, seed >> 32])


@pytest.fixture(params=DEVICES)
def device(request):
    return request.param


def run_with_seed(compiled, seed, *args):
    """Runs a compiled function's artifact with the seed `seed`, twice: the
    second time into poisoned buffers, which it must fill with the same
    values (a seed decides every element)."""
    device = compiled.seed_device
    inputs = [*args, *compiled.constants, torch.tensor(seed, dtype=torch.int64, device=device)]
    first = compiled.artifact(*inputs)
    out = [poisoned_like(r) for r in first]
    results = compiled.artifact(*inputs, out=out)
    if device == "cuda":
        torch.cuda.synchronize()
    for got, want in zip(results, first):
        assert torch.equal(got, want)
    return results


def test_reference_matches_known_answers():
    # Random123's known-answer vectors for philox4x32_10.
    assert philox([0, 0, 0, 0], [0, 0]) == [0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8]
    assert philox([MASK32] * 4, [MASK32] * 2) == [0x408F276D, 0x41C83B0E, 0xA20BC7C6,
                                                  0x6D5451FD]
    assert philox([0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344],
                  [0xA4093822, 0x299F31D0]) == [0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1]


@pytest.mark.parametrize("seed", [0, 12345, -2**63 + 7])
def test_rand_is_philox_bit_for_bit(device, seed, tmp_path):
    compiled = kiln.compile(lambda: torch.rand(3, 50, device=device) * 1,
                            [], device=device, cache_dir=tmp_path)
    (result,) = run_with_seed(compiled, seed)
    expected = torch.tensor([(kiln_words(seed, 0, i)[0] >> 8) * 2.0**-24 for i in range(150)])
    assert torch.equal(result.cpu().flatten(), expected)


def test_rand_f64_uses_53_bits(tmp_path):
    compiled = kiln.compile(lambda: torch.rand(40, dtype=torch.float64) + 0, [],
                            cache_dir=tmp_path)
    (result,) = run_with_seed(compiled, 99)
    expected = []
    for i in range(40):
        words = kiln_words(99, 0, i)
        expected.append((((words[1] << 32) | words[0]) >> 11) * 2.0**-53)
    assert torch.equal(result, torch.tensor(expected, dtype=torch.float64))


@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_rand_half_is_below_one_and_exact(dtype, tmp_path):
    compiled = kiln.compile(lambda: torch.rand(64, 64, dtype=dtype) * 1, [],
                            cache_dir=tmp_path)
    (result,) = run_with_seed(compiled, 3)
    digits = {torch.float16: 11, torch.bfloat16: 8}[dtype]  # Significand bits.
    expected = torch.tensor([(kiln_words(3, 0, i)[0] >> (32 - digits)) * 2.0**-digits
                             for i in range(64 * 64)]).to(dtype)
    assert torch.equal(result.flatten(), expected)
    assert result.max().item() < 1.0


def test_randn_is_box_muller(tmp_path):
    compiled = kiln.compile(lambda: torch.randn(200) + 0, [], cache_dir=tmp_path)
    (result,) = run_with_seed(compiled, 5)
    expected = []
    for i in range(200):
        words = kiln_words(5, 0, i)
        u1 = 1.0 - (words[0] >> 8) * 2.0**-24
        u2 = (words[1] >> 8) * 2.0**-24
        expected.append(math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2))
    torch.testing.assert_close(result, torch.tensor(expected), rtol=1e-4, atol=1e-4)


def test_randn_statistics(device, tmp_path):
    compiled = kiln.compile(lambda x: torch.randn(256, 1024, device=device) + x,
                            [torch.zeros(1024, device=device)], cache_dir=tmp_path)
    result = compiled(torch.zeros(1024, device=device)).double()
    assert abs(result.mean().item()) < 0.01
    assert abs(result.std().item() - 1.0) < 0.01
    # About 4.6% of a normal sample lies beyond two standard deviations.
    assert abs((result.abs() > 2).double().mean().item() - 0.0455) < 0.003


@pytest.mark.parametrize("p", [0.1, 0.5])
def test_dropout_keeps_what_the_draws_say(device, p, tmp_path):
    def dropout(x):
        return torch.nn.functional.dropout(x, p, True) + 0

    x = torch.randn(16, 100, device=device)
    compiled = kiln.compile(dropout, [x], cache_dir=tmp_path)
    fresh = torch.randn(16, 100, device=device)
    (result,) = run_with_seed(compiled, 2024, fresh)
    # torch 1.13 traces dropout as bernoulli_(1 - p); later versions as
    # native_dropout(p): both keep an element where its draw is below 1 - p.
    keep = torch.tensor([(kiln_words(2024, 0, i)[0] >> 8) * 2.0**-24 < 1 - p
                         for i in range(1600)]).reshape(16, 100).to(device)
    torch.testing.assert_close(result, torch.where(keep, fresh / (1 - p), 0.0))


def test_bernoulli_copied_into_a_fresh_tensor(device, tmp_path):
    # How torch 2.x traces dropout on the CPU: bernoulli draws into a fresh
    # tensor, then an in-place division as a copy of the quotient into it.
    def mask(x):
        noise = torch.bernoulli(torch.empty_like(x), 0.3)
        noise.copy_(noise / 0.3)
        return noise * x

    x = torch.randn(64, 128, device=device)
    compiled = kiln.compile(mask, [x], cache_dir=tmp_path)
    assert "fx.to_copy" in compiled.graph_text
    result = compiled(x)
    kept = result != 0
    torch.testing.assert_close(result[kept], x[kept] / 0.3)
    assert 0.27 < kept.double().mean().item() < 0.33


def test_randperm_is_a_permutation_drawn_anew(device, tmp_path):
    def shuffle(x):
        return x[torch.randperm(300, device=x.device)], torch.randperm(
            50, dtype=torch.int32, device=x.device), torch.randperm(5000, device=x.device)

    x = torch.arange(300.0, device=device)
    compiled = kiln.compile(shuffle, [x], cache_dir=tmp_path)
    (shuffled, small, long), (again, _, long_again) = compiled(x), compiled(x)
    assert torch.equal(shuffled.sort().values, x)
    assert small.dtype == torch.int32
    assert torch.equal(small.sort().values.long().cpu(), torch.arange(50))
    # Longer than 4096: the draws sort through a sorting network.
    assert torch.equal(long.sort().values.cpu(), torch.arange(5000))
    assert not torch.equal(long, long_again)
    assert not torch.equal(shuffled, again)
    # Not the identity, nor close to it: a uniform shuffle leaves about one
    # element in place.
    assert (shuffled == x).sum().item() < 10


def test_each_call_draws_anew_and_manual_seed_repeats(device, tmp_path):
    compiled = kiln.compile(lambda x: torch.nn.functional.dropout(x, 0.5, True),
                            [torch.randn(4096, device=device)], cache_dir=tmp_path)
    x = torch.randn(4096, device=device) + 10.0
    first, second = compiled(x), compiled(x)
    assert not torch.equal(first, second)
    kept = (first != 0).double().mean().item()
    assert 0.45 < kept < 0.55
    torch.manual_seed(7)
    repeated = compiled(x)
    torch.manual_seed(7)
    assert torch.equal(compiled(x), repeated)


def test_streams_differ_within_a_graph(tmp_path):
    compiled = kiln.compile(lambda: (torch.rand(1000), torch.rand(1000)), [],
                            cache_dir=tmp_path)
    first, second = run_with_seed(compiled, 1)
    assert not torch.equal(first, second)
    assert "offset = 1" in compiled.graph_text


def test_seeded_call_runs_the_op_in_pytorch():
    torch.manual_seed(0)
    expected = torch.ops.aten.native_dropout.default(torch.ones(100), 0.5, True)
    torch.manual_seed(0)
    got = seeded("aten.native_dropout.default", torch.tensor(3), 0, torch.ones(100), 0.5, True)
    assert all(torch.equal(a, b) for a, b in zip(got, expected))
    assert "aten.bernoulli.p" in RANDOM_OPS and "aten.rand.default" in RANDOM_OPS


def test_unseeded_random_op_is_refused():
    gm = kiln.capture(lambda: torch.rand(4) + 1, [])
    with pytest.raises(kiln.UnsupportedOpError, match=r"aten\.rand\.default draws random "
                                                       r"numbers: seed it"):
        kiln.import_graph(gm, [])
