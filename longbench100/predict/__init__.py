"""The prediction runner: send generated prompts to an OpenAI-compatible server and store the answers.

``data`` indexes the generated data folder, ``store`` is the crash-safe append-only prediction
files, ``runner`` drives the requests and ``summary`` counts what happened.
"""
