"""A candidate's embodied emissions: the cited kgCO2e of its GPUs and of a server of that many
GPUs (when one is cited), spread over the [embodied] lifetime."""

from __future__ import annotations

from pipeline.inputs.draft import Draft


def resolve_embodied(d: Draft) -> None:
    c = d.c
    gpu = d.mkt.row("embodied", item=c.gpu, kind="gpu")
    server = d.mkt.row("embodied", item=f"server-{c.gpu_count}gpu", kind="server")
    if gpu is None:
        d.notes.append(f"embodied emissions not computed: no cited figure for {c.gpu}")
        return
    total = gpu["kgco2e"] * c.gpu_count + (server["kgco2e"] if server else 0.0)
    parts = f"{c.gpu_count} x {gpu['kgco2e']:g} kgCO2e ({c.gpu}, {gpu['source_url']})"
    if server:
        parts += f" + {server['kgco2e']:g} kgCO2e ({server['item']}, {server['source_url']})"
    else:
        d.notes.append(f"embodied emissions cover the GPUs only: no cited figure for a "
                       f"{c.gpu_count}-GPU server")
    d.inputs.add("embodied_kgco2e", total, f"{d.key}.embodied", "reference", parts)
    d.inputs.add("lifetime_years", d.proposal.embodied.lifetime_years,
                 "embodied.lifetime_years", "declared", "[embodied] lifetime")
    d.row["embodied_source"] = parts
    for item in (gpu, server):
        if item:
            d.prov.cite("embodied", item["item"], item)
