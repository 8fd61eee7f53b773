"""Market-data sources, one module per source (ecb, energy_charts, scaleway, ovhcloud, azure,
aws, ember, electricity_maps, omie, entsoe, odre), each owning its ingest job in the shape
`sources.job` declares; `sources.registry` lists them in the order ingest runs them.

`instance_types.csv` maps the AWS instance types and Azure VM SKUs we price to a hardware id
(sources/reference/hardware.csv) and the GPUs per instance (read by `sources.offers`)."""
