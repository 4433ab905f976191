"""Dataset snapshots: Parquet files, a dataset card and a checksum manifest that ``datasets`` and the hub can use.

Modules, one job each: ``source`` reads and checks a generated data folder, ``parquet`` converts
records to and from Parquet, ``card`` renders the dataset card, ``checksums`` writes and verifies the
snapshot manifest, ``snapshot`` assembles a snapshot folder, ``unpack`` rebuilds a data folder from
one, and ``hub`` checks access to and uploads to the Hugging Face hub.
"""
