"""One subpackage per puzzle: :mod:`.nqueens` and :mod:`.matchsticks`.

They sit here, not at the top level, so that ``gpuqueens.nqueens`` and
``gpuqueens.matchsticks`` can be the public functions without shadowing a package.
"""
