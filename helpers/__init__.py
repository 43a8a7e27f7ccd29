"""What the course notebooks import: setup, device, data, plotting, timing and checks.

Nothing here imports `helpers.reference` (the answers) or `autograder` (the grading tools).
"""

from helpers.device import describe_device, pick_device
from helpers.setup import seed_everything, setup

__all__ = ["describe_device", "pick_device", "seed_everything", "setup"]
